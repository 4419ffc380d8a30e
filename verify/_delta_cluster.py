"""The cluster's deltas: feature levels, and broker and controller registrations."""

from __future__ import annotations

from collections.abc import Sequence

from verify._delta_base import Data, _merged
from verify.errors import ReplayError
from verify.image import (
    MIGRATING_DIRECTORY,
    BrokerEndpoint,
    BrokerRegistration,
    ClusterImage,
    ControllerRegistration,
    FeaturesImage,
    FrozenMap,
)


def _endpoints(data: Data) -> tuple[BrokerEndpoint, ...]:
    return tuple(
        BrokerEndpoint(e["name"], e["host"], int(e["port"]), int(e.get("securityProtocol", 0)))
        for e in data.get("endPoints") or ()
    )


def _features(data: Data) -> FrozenMap[str, tuple[int, int]]:
    return FrozenMap(
        {
            f["name"]: (int(f.get("minSupportedVersion", 0)), int(f.get("maxSupportedVersion", 0)))
            for f in data.get("features") or ()
        }
    )


class FeaturesDelta:
    """Feature level changes; level 0 removes a feature (never metadata.version)."""

    def __init__(self, base: FeaturesImage) -> None:
        self._base = base
        self._changes: dict[str, int | None] = {}

    def replay(self, data: Data) -> None:
        """Apply a `FeatureLevelRecord`."""
        name, level = data["name"], int(data["featureLevel"])
        self._changes[name] = None if level == 0 and name != "metadata.version" else level

    def changed_features(self) -> frozenset[str]:
        """Names of the features this delta sets or removes."""
        return frozenset(self._changes)

    def finish_snapshot(self) -> None:
        """Drop every feature the snapshot did not mention."""
        for name in self._base.levels:
            self._changes.setdefault(name, None)

    def apply(self) -> FeaturesImage:
        """The next features image."""
        levels = self._base.levels.thaw()
        for name, level in self._changes.items():
            if level is None:
                levels.pop(name, None)
            else:
                levels[name] = level
        return FeaturesImage(FrozenMap(levels))


class ClusterDelta:
    """Broker and controller registrations (Kafka's `ClusterDelta`)."""

    def __init__(self, base: ClusterImage) -> None:
        self._base = base
        self._brokers: dict[int, BrokerRegistration | None] = {}
        self._controllers: dict[int, ControllerRegistration | None] = {}

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        """The broker's registration as of this delta, None if unregistered."""
        if broker_id in self._brokers:
            return self._brokers[broker_id]
        return self._base.brokers.get(broker_id)

    def replay_register(self, data: Data) -> None:
        """Apply a `RegisterBrokerRecord` (v0-3): a new registration replaces any older one."""
        broker_id = int(data["brokerId"])
        self._brokers[broker_id] = BrokerRegistration(
            broker_id=broker_id,
            epoch=int(data.get("brokerEpoch", 0)),
            incarnation_id=data.get("incarnationId", MIGRATING_DIRECTORY),
            endpoints=_endpoints(data),
            features=_features(data),
            rack=data.get("rack"),
            fenced=bool(data.get("fenced", True)),
            in_controlled_shutdown=bool(data.get("inControlledShutdown", False)),
            is_migrating_zk_broker=bool(data.get("isMigratingZkBroker", False)),
            log_dirs=tuple(data.get("logDirs") or ()),
        )

    def replay_unregister(self, data: Data) -> None:
        """Apply an `UnregisterBrokerRecord`."""
        self._brokers[int(data["brokerId"])] = None

    def replay_change(
        self,
        broker_id: int,
        epoch: int,
        *,
        fenced: int = 0,
        controlled_shutdown: int = 0,
        log_dirs: Sequence[str] = (),
    ) -> None:
        """Apply a fence/unfence/registration change; the broker and epoch must match.

        Args:
            fenced: 1 fence, -1 unfence, 0 unchanged (`BrokerRegistrationFencingChange`).
            controlled_shutdown: 1 enters controlled shutdown, 0 unchanged.
            log_dirs: new log directories, empty for unchanged.

        Raises:
            ReplayError: no registration for the broker, or a different epoch.
        """
        cur = self.broker(broker_id)
        if cur is None:
            raise ReplayError(f"no broker registration found for broker {broker_id}")
        if cur.epoch != epoch:
            raise ReplayError(
                f"broker {broker_id} is registered with epoch {cur.epoch}, not {epoch}"
            )
        new_fenced = cur.fenced if fenced == 0 else fenced > 0
        shutdown = cur.in_controlled_shutdown or controlled_shutdown == 1
        self._brokers[broker_id] = BrokerRegistration(
            broker_id, cur.epoch, cur.incarnation_id, cur.endpoints, cur.features, cur.rack,
            new_fenced, shutdown, cur.is_migrating_zk_broker,
            tuple(log_dirs) if log_dirs else cur.log_dirs,
        )

    def replay_register_controller(self, data: Data) -> None:
        """Apply a `RegisterControllerRecord`."""
        controller_id = int(data["controllerId"])
        self._controllers[controller_id] = ControllerRegistration(
            controller_id,
            data.get("incarnationId", MIGRATING_DIRECTORY),
            bool(data.get("zkMigrationReady", False)),
            _endpoints(data),
            _features(data),
        )

    def changed_broker_ids(self) -> frozenset[int]:
        """Brokers this delta registers, changes or unregisters."""
        return frozenset(self._brokers)

    def changed_controller_ids(self) -> frozenset[int]:
        """Controllers this delta registers."""
        return frozenset(self._controllers)

    def finish_snapshot(self) -> None:
        """Drop every registration the snapshot did not mention."""
        for broker_id in self._base.brokers:
            self._brokers.setdefault(broker_id, None)
        for controller_id in self._base.controllers:
            self._controllers.setdefault(controller_id, None)

    def apply(self) -> ClusterImage:
        """The next brokers image."""
        return ClusterImage(
            _merged(self._base.brokers, self._brokers),
            _merged(self._base.controllers, self._controllers),
        )
