"""The fence against real ZooKeeper: Kafka's claim of /controller, the zombie's failing write,
/migration under the epoch check (I4), and the rollback that lets a ZooKeeper controller lead.

Expected values are hand-written facts from Kafka's behaviour (`KafkaZkClient`'s
`tryRegisterKRaftControllerAsActiveController` and `retryMigrationRequestsUntilConnected`, and
docs/ops.html "Reverting to ZooKeeper mode During the Migration"), not derived from the code under
test.
"""

from __future__ import annotations

import json

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError

from tests.support.migration_cluster import fence_znodes
from zkreader import (
    MIGRATION_ABSENT,
    ControllerMovedError,
    MigrationMovedError,
    MigrationState,
    fence_zk_controller,
    read_fence_state,
    release_claim,
    session_for_client,
    write_migration_state,
)


def zk_controller(client: KazooClient, broker_id: int = 1, epoch: int = 7) -> int:
    """A ZooKeeper-mode controller as Kafka leaves it: ephemeral /controller, /controller_epoch
    = `epoch`. Returns /controller_epoch's znode version (the old controller's fencing token)."""
    client.create("/controller_epoch", str(epoch).encode())
    client.create("/controller", json.dumps(
        {"version": 2, "brokerid": broker_id, "timestamp": "1700000000000",
         "kraftControllerEpoch": -1}).encode(), ephemeral=True)
    client.ensure_path("/brokers/topics/t/partitions/0")
    client.create("/brokers/topics/t/partitions/0/state", json.dumps(
        {"controller_epoch": epoch, "leader": 1, "version": 1, "leader_epoch": 0,
         "isr": [1]}).encode())
    return client.get("/controller_epoch")[1].version


def test_fence_claims_controller_and_old_controllers_writes_fail(
    zk_chroot_client: KazooClient,
) -> None:
    client = zk_chroot_client
    old_version = zk_controller(client)
    session = session_for_client(client)
    sent = []
    token = fence_zk_controller(session, kraft_controller_id=3000, kraft_epoch=1,
                                timestamp_ms=1700000000123, migration_version=MIGRATION_ABSENT,
                                on_sent=lambda: sent.append(1))
    assert sent == [1]
    data, stat = client.get("/controller_epoch")
    assert data == b"8"
    assert (token.controller_epoch, token.epoch_zk_version) == (8, old_version + 1)
    data, stat = client.get("/controller")
    assert json.loads(data) == {"version": 2, "brokerid": 3000, "timestamp": "1700000000123",
                                "kraftControllerEpoch": 1}
    assert stat.ephemeralOwner == 0  # persistent: brokers never run for election again
    data, stat = client.get("/migration")
    assert json.loads(data) == {"version": 0, "kraft_controller_id": 3000,
                                "kraft_controller_epoch": 1, "kraft_metadata_offset": -1,
                                "kraft_metadata_epoch": -1}
    assert token.migration_zk_version == stat.version

    # the zombie: the old ZooKeeper controller's ISR change, checked as Kafka's controller does
    tx = client.transaction()
    tx.check("/controller_epoch", old_version)
    tx.set_data("/brokers/topics/t/partitions/0/state", b'{"isr":[1,2]}')
    results = tx.commit()
    assert isinstance(results[0], BadVersionError)
    assert json.loads(client.get("/brokers/topics/t/partitions/0/state")[0])["isr"] == [1]

    # /migration under the fence's check
    version = write_migration_state(session, token, MigrationState(3000, 1, 41, 1))
    data, stat = client.get("/migration")
    assert json.loads(data)["kraft_metadata_offset"] == 41
    assert stat.version == version == token.migration_zk_version + 1
    # a re-run after that very write changes nothing
    assert write_migration_state(session, token, MigrationState(3000, 1, 41, 1)) == version


def test_a_higher_kraft_claim_is_not_fenced_and_nothing_changes(
    zk_chroot_client: KazooClient,
) -> None:
    client = zk_chroot_client
    client.create("/controller_epoch", b"3")
    client.create("/controller", json.dumps(
        {"version": 2, "brokerid": 3001, "timestamp": "1", "kraftControllerEpoch": 4}).encode())
    session = session_for_client(client)
    with pytest.raises(ControllerMovedError, match="kraftControllerEpoch 4"):
        fence_zk_controller(session, kraft_controller_id=3000, kraft_epoch=1, timestamp_ms=1,
                            migration_version=MIGRATION_ABSENT)
    assert client.get("/controller_epoch")[0] == b"3"
    assert client.exists("/migration") is None


def test_writes_after_someone_else_moved_the_epoch_fail(zk_chroot_client: KazooClient) -> None:
    client = zk_chroot_client
    zk_controller(client)
    session = session_for_client(client)
    token = fence_zk_controller(session, kraft_controller_id=3000, kraft_epoch=1, timestamp_ms=1,
                                migration_version=MIGRATION_ABSENT)
    client.set("/controller_epoch", b"9")  # another controller bumped it
    with pytest.raises(ControllerMovedError, match="fenced us"):
        write_migration_state(session, token, MigrationState(3000, 1, 41, 1))
    assert json.loads(client.get("/migration")[0])["kraft_metadata_offset"] == -1


def test_release_lets_a_zookeeper_controller_lead_again(zk_chroot_client: KazooClient) -> None:
    client = zk_chroot_client
    zk_controller(client, epoch=2)
    session = session_for_client(client)
    fence_zk_controller(session, kraft_controller_id=3000, kraft_epoch=1, timestamp_ms=1,
                        migration_version=MIGRATION_ABSENT)
    # dual-write wrote the KRaft epoch (here 5) into a state znode (KAFKA-20488)
    client.set("/brokers/topics/t/partitions/0/state", json.dumps(
        {"controller_epoch": 5, "leader": 1, "version": 1, "leader_epoch": 1,
         "isr": [1]}).encode())
    done = release_claim(session, min_controller_epoch=5,
                         expect_controller=client.get("/controller")[0])
    assert done["removed"] == ["/controller", "/migration"]
    assert client.exists("/controller") is None and client.exists("/migration") is None
    # a ZooKeeper controller election, as KafkaController.elect does it
    client.create("/controller", b'{"version":2,"brokerid":2,"timestamp":"2",'
                  b'"kraftControllerEpoch":-1}', ephemeral=True)
    data, stat = client.get("/controller_epoch")
    new_epoch = int(data) + 1
    tx = client.transaction()
    tx.set_data("/controller_epoch", str(new_epoch).encode(), version=stat.version)
    assert not any(isinstance(r, Exception) for r in tx.commit())
    # its leader election is not aborted: the state's controller_epoch is below its own
    state = json.loads(client.get("/brokers/topics/t/partitions/0/state")[0])
    assert state["controller_epoch"] < new_epoch
    tx = client.transaction()
    tx.check("/controller_epoch", stat.version + 1)
    tx.set_data("/brokers/topics/t/partitions/0/state", json.dumps(
        {**state, "controller_epoch": new_epoch, "leader_epoch": 2}).encode())
    assert not any(isinstance(r, Exception) for r in tx.commit())
    assert read_fence_state(session).kraft_controller_epoch == -1


EMPTY_MIGRATION = {"version": 0, "kraft_controller_id": -1, "kraft_controller_epoch": -1,
                   "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}
OTHER_WRITER = {"version": 0, "kraft_controller_id": 3002, "kraft_controller_epoch": 5,
                "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}


def test_a_migration_znode_rewritten_since_it_was_judged_fails_the_fence_before_it_is_sent(
    zk_chroot_client: KazooClient,
) -> None:
    # judged: the empty /migration controllers in migration mode create (version 0); then a
    # controller that became active records itself in it (version 1)
    client = zk_chroot_client
    zk_controller(client)
    client.create("/migration", json.dumps(EMPTY_MIGRATION).encode())
    client.set("/migration", json.dumps(OTHER_WRITER).encode())
    left = fence_znodes(client)
    sent: list[int] = []
    with pytest.raises(MigrationMovedError) as refused:
        fence_zk_controller(session_for_client(client), kraft_controller_id=3000, kraft_epoch=1,
                            timestamp_ms=1, migration_version=0,
                            on_sent=lambda: sent.append(1))
    assert "/migration changed since this run read and judged it (it was at version 0, it is " \
           "now at version 1)" in str(refused.value)
    assert sent == []
    assert fence_znodes(client) == left


@pytest.mark.parametrize("judged", ["absent", "at version 0"])
def test_the_multi_op_itself_checks_migration_at_the_judged_version(
    zk_chroot_client: KazooClient, judged: str
) -> None:
    # the other writer acts between the fence's own read and its commit (the on_sent hook
    # runs just before the multi-op goes out), so only the multi-op's own check can see it
    client = zk_chroot_client
    zk_controller(client)
    if judged == "absent":
        def other_writer() -> None:
            client.create("/migration", json.dumps(OTHER_WRITER).encode())
        version = MIGRATION_ABSENT
    else:
        client.create("/migration", json.dumps(EMPTY_MIGRATION).encode())

        def other_writer() -> None:
            client.set("/migration", json.dumps(OTHER_WRITER).encode())
        version = 0
    before = fence_znodes(client)
    with pytest.raises(MigrationMovedError) as refused:
        fence_zk_controller(session_for_client(client), kraft_controller_id=3000, kraft_epoch=1,
                            timestamp_ms=1, migration_version=version, on_sent=other_writer)
    now_version = 0 if judged == "absent" else 1
    assert f"(it was {judged}, it is now at version {now_version})" in str(refused.value)
    # nothing of the multi-op applied: the ZooKeeper controller's epoch and ephemeral claim
    # are as they were, /migration as the other writer left it
    after = fence_znodes(client)
    assert after["/controller_epoch"] == before["/controller_epoch"]
    assert after["/controller"] == before["/controller"]
    assert after["/controller"] is not None and after["/controller"][2] != 0
    mig = after["/migration"]
    assert mig is not None and json.loads(mig[0]) == OTHER_WRITER and mig[1] == now_version


@pytest.mark.parametrize("after_fence", ["rewritten", "removed"])
def test_a_migration_znode_changed_after_the_fence_is_not_overwritten(
    zk_chroot_client: KazooClient, after_fence: str
) -> None:
    # /controller_epoch untouched, so only /migration's own version tells: a tool that rewrote
    # it, or removed it, after our fence; the write after the drain leaves it as it is
    client = zk_chroot_client
    zk_controller(client)
    session = session_for_client(client)
    token = fence_zk_controller(session, kraft_controller_id=3000, kraft_epoch=1, timestamp_ms=1,
                                migration_version=MIGRATION_ABSENT)
    if after_fence == "rewritten":
        client.set("/migration", json.dumps(OTHER_WRITER).encode())
    else:
        client.delete("/migration")
    with pytest.raises(MigrationMovedError, match="not overwriting it"):
        write_migration_state(session, token, MigrationState(3000, 1, 41, 1))
    if after_fence == "rewritten":
        data, stat = client.get("/migration")
        assert (json.loads(data), stat.version) == (OTHER_WRITER, 1)
    else:
        assert client.exists("/migration") is None


def test_the_migration_write_reports_itself_in_flight_once_sent(
    zk_chroot_client: KazooClient,
) -> None:
    # in flight = handed to the connection, reply not read yet; then the write completes
    client = zk_chroot_client
    zk_controller(client)
    session = session_for_client(client)
    token = fence_zk_controller(session, kraft_controller_id=3000, kraft_epoch=1, timestamp_ms=1,
                                migration_version=MIGRATION_ABSENT)
    calls: list[int] = []
    version = write_migration_state(session, token, MigrationState(3000, 1, 41, 1),
                                    in_flight=lambda: calls.append(1))
    assert calls == [1]
    assert json.loads(client.get("/migration")[0])["kraft_metadata_offset"] == 41
    assert version == 1
