/*
 * Baselines for benchmarks/read.py: ZooKeeper's own Java client reading a list of znodes,
 * pipelined, at most WINDOW reads in flight (a semaphore), no watches. Two modes:
 *   (c) one asynchronous getData per znode;
 *   (d) with --multi BATCH: asynchronous multi() requests of BATCH Op.getData each (the read-only
 *       multi ZooKeeper 3.6+ serves), WINDOW / BATCH of them in flight: the same batch size and
 *       window as zk2kraft's multiRead pipeline, so the like-for-like peer.
 *
 * Usage: java -cp <zookeeper.jar:zookeeper-jute.jar:slf4j...>:<build dir> ReadBench \
 *            CONNECT PATHS_FILE WINDOW ROUNDS [--stdin] [--multi BATCH]
 * Prints one JSON line per round: {"round":r,"reads":n,"missing":m,"errors":e,"bytes":b,
 * "seconds":s,"per_s":x}. Each round reads every path once; later rounds show the JIT-warm rate.
 * With --stdin it waits for a line on stdin before each round, so the caller can interleave its
 * own rounds with these (both then see the same machine load; the JIT stays warm).
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

public final class ReadBench {
    private ReadBench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: ReadBench CONNECT PATHS_FILE WINDOW ROUNDS");
            System.exit(2);
        }
        String connect = args[0];
        List<String> paths = Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8);
        int window = Integer.parseInt(args[2]);
        int rounds = Integer.parseInt(args[3]);
        boolean paced = false;
        int batch = 0;  // 0: plain getData (c); > 0: multi of this many Op.getData (d)
        for (int i = 4; i < args.length; i++) {
            if ("--stdin".equals(args[i])) {
                paced = true;
            } else if ("--multi".equals(args[i]) && i + 1 < args.length) {
                batch = Integer.parseInt(args[++i]);
            }
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8));

        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 30000, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(30, TimeUnit.SECONDS)) {
            System.err.println("no ZooKeeper session within 30 s");
            System.exit(3);
        }
        try {
            for (int round = 1; round <= rounds; round++) {
                if (paced && in.readLine() == null) {
                    break;
                }
                if (batch > 0) {
                    readMulti(zk, paths, window, batch, round);
                } else {
                    readAll(zk, paths, window, round);
                }
            }
        } finally {
            zk.close();
        }
    }

    private static void readAll(ZooKeeper zk, List<String> paths, int window, int round)
            throws InterruptedException {
        Semaphore slots = new Semaphore(window);
        CountDownLatch done = new CountDownLatch(paths.size());
        AtomicLong bytes = new AtomicLong();
        AtomicLong missing = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        int noNode = KeeperException.Code.NONODE.intValue();
        long started = System.nanoTime();
        for (String path : paths) {
            slots.acquire();
            zk.getData(path, false, (rc, p, ctx, data, stat) -> {
                if (rc == 0) {
                    if (data != null) {
                        bytes.addAndGet(data.length);
                    }
                } else if (rc == noNode) {
                    missing.incrementAndGet();
                } else {
                    errors.incrementAndGet();
                }
                slots.release();
                done.countDown();
            }, null);
        }
        done.await();
        report(round, paths.size(), missing.get(), errors.get(), bytes.get(), started);
    }

    /** (d): multi() of up to BATCH Op.getData, at most WINDOW reads (WINDOW/BATCH requests) in
     * flight. A missing znode is a per-op NONODE ErrorResult, as in zk2kraft's multiRead. */
    private static void readMulti(ZooKeeper zk, List<String> paths, int window, int batch,
            int round) throws InterruptedException {
        Semaphore slots = new Semaphore(Math.max(window, batch));
        int requests = (paths.size() + batch - 1) / batch;
        CountDownLatch done = new CountDownLatch(requests);
        AtomicLong bytes = new AtomicLong();
        AtomicLong missing = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        int noNode = KeeperException.Code.NONODE.intValue();
        long started = System.nanoTime();
        for (int from = 0; from < paths.size(); from += batch) {
            List<Op> ops = new ArrayList<>(batch);
            for (String path : paths.subList(from, Math.min(from + batch, paths.size()))) {
                ops.add(Op.getData(path));
            }
            int size = ops.size();
            slots.acquire(size);
            zk.multi(ops, (rc, p, ctx, results) -> {
                if (results == null) {
                    errors.addAndGet(size);
                } else {
                    for (OpResult r : results) {
                        if (r instanceof OpResult.GetDataResult) {
                            byte[] data = ((OpResult.GetDataResult) r).getData();
                            if (data != null) {
                                bytes.addAndGet(data.length);
                            }
                        } else if (r instanceof OpResult.ErrorResult
                                && ((OpResult.ErrorResult) r).getErr() == noNode) {
                            missing.incrementAndGet();
                        } else {
                            errors.incrementAndGet();
                        }
                    }
                }
                slots.release(size);
                done.countDown();
            }, null);
        }
        done.await();
        report(round, paths.size(), missing.get(), errors.get(), bytes.get(), started);
    }

    private static void report(int round, int reads, long missing, long errors, long bytes,
            long started) {
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("{\"round\":%d,\"reads\":%d,\"missing\":%d,\"errors\":%d,\"bytes\":%d,"
                + "\"seconds\":%.4f,\"per_s\":%.1f}%n", round, reads, missing, errors, bytes,
                seconds, reads / seconds);
        System.out.flush();
    }
}
