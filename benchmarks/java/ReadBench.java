/*
 * Baseline for benchmarks/read.py: ZooKeeper's own Java client reading a list of znodes with
 * pipelined asynchronous getData calls, at most WINDOW in flight (a semaphore), no watches.
 *
 * Usage: java -cp <zookeeper.jar:zookeeper-jute.jar:slf4j...>:<build dir> ReadBench \
 *            CONNECT PATHS_FILE WINDOW ROUNDS [--stdin]
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
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.KeeperException;
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
        boolean paced = args.length > 4 && "--stdin".equals(args[4]);
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
                readAll(zk, paths, window, round);
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
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("{\"round\":%d,\"reads\":%d,\"missing\":%d,\"errors\":%d,\"bytes\":%d,"
                + "\"seconds\":%.4f,\"per_s\":%.1f}%n", round, paths.size(), missing.get(),
                errors.get(), bytes.get(), seconds, paths.size() / seconds);
        System.out.flush();
    }
}
