//! Rust tower's cost per request for the stacks that `bench/stacks_test.go`
//! measures in Go, with the same parameters, for `bench/compare.sh`.
//!
//! A request is what a caller of the Go module does: wait for readiness,
//! call, and await the response, over a handler that answers at once. Each
//! stack runs once to warm up, then `REPS` times; the program prints the
//! median nanoseconds per request as a `<name> <ns>` line, and the spread
//! of the repetitions as a comment line, starting with `#`.
//!
//! Usage: `towerrs [N]`: N requests per repetition (default 2,000,000), a
//! tenth of that for the Buffer stacks, whose requests cost ten times more.

use std::convert::Infallible;
use std::fmt::Debug;
use std::hint::black_box;
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Runtime};
use tower::buffer::Buffer;
use tower::limit::rate::Rate;
use tower::limit::{ConcurrencyLimit, RateLimit};
use tower::timeout::Timeout;
use tower::util::BoxService;
use tower::{service_fn, Service, ServiceExt};

/// Timed repetitions per stack. Odd, so that the median is one of them.
const REPS: usize = 5;
/// Requests per repetition when the command line gives none.
const DEFAULT_REQUESTS: u64 = 2_000_000;

// The parameters of bench/stacks_test.go.

/// A `ConcurrencyLimit` this large never makes a request wait.
const BIG_LIMIT: usize = 1 << 20;
/// A `Timeout` this long never fires on a handler that answers at once.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
/// The bound of every `Buffer`.
const BUFFER_BOUND: usize = 1024;
/// The callers that share a `Buffer`, each on a task of its own.
const CALLERS: u64 = 16;
/// The worker threads under the `Buffer`'s callers: the Go side's 2 CPUs.
const WORKERS: usize = 2;

/// The handler at the bottom of every stack: it answers its request at once.
async fn echo(req: u64) -> Result<u64, Infallible> {
    Ok(req)
}

/// Sends `n` requests through `svc`, one after another, and returns the time
/// they took.
async fn serve<S>(mut svc: S, n: u64) -> Duration
where
    S: Service<u64, Response = u64>,
    S::Error: Debug,
{
    let start = Instant::now();
    for i in 0..n {
        let rsp = svc
            .ready()
            .await
            .expect("ready")
            .call(black_box(i))
            .await
            .expect("call");
        black_box(rsp);
    }
    start.elapsed()
}

/// Sends `n` requests through `svc` from `CALLERS` tasks at once, each with a
/// handle of its own (tower's way to share a service), and returns the time
/// they all took.
async fn serve_shared<S>(svc: S, n: u64) -> Duration
where
    S: Service<u64, Response = u64> + Clone + Send + 'static,
    S::Error: Debug + Send,
    S::Future: Send,
{
    let start = Instant::now();
    let callers: Vec<_> = (0..CALLERS)
        .map(|_| tokio::spawn(serve(svc.clone(), n / CALLERS)))
        .collect();
    for caller in callers {
        caller.await.expect("caller");
    }
    start.elapsed()
}

/// Runs `once`, which sends `n` requests and returns the time they took,
/// once to warm up and `REPS` times to measure, and prints the median cost
/// per request.
fn measure(name: &str, n: u64, mut once: impl FnMut(u64) -> Duration) {
    black_box(once(n));
    let mut ns: Vec<f64> = (0..REPS)
        .map(|_| once(n).as_nanos() as f64 / n as f64)
        .collect();
    ns.sort_by(f64::total_cmp);
    println!(
        "# {name}: {n} requests x {REPS}, min {:.1} max {:.1}",
        ns[0],
        ns[REPS - 1]
    );
    println!("{name} {:.1}", ns[REPS / 2]);
}

/// Returns a runtime with a timer: on the calling thread alone, or with
/// `workers` threads of its own.
fn runtime(workers: Option<usize>) -> Runtime {
    let mut b = match workers {
        None => Builder::new_current_thread(),
        Some(n) => {
            let mut b = Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
    };
    b.enable_time().build().expect("tokio runtime")
}

fn main() {
    let n = match std::env::args().nth(1) {
        None => DEFAULT_REQUESTS,
        Some(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("towerrs: N must be a positive integer, not {s:?}")),
    };
    assert!(
        n >= CALLERS,
        "towerrs: N must be at least {CALLERS}, not {n}"
    );
    // A multiple of CALLERS, so that every caller sends as many.
    let n_buffer = (n / 10).max(CALLERS) / CALLERS * CALLERS;

    // The sequential stacks run on one thread, as a Go benchmark's loop does.
    let rt = runtime(None);
    measure("tower_concurrency_limit_ns", n, |n| {
        rt.block_on(serve(ConcurrencyLimit::new(service_fn(echo), BIG_LIMIT), n))
    });
    measure("tower_timeout_ns", n, |n| {
        rt.block_on(serve(Timeout::new(service_fn(echo), CALL_TIMEOUT), n))
    });
    measure("tower_timeout_concurrency_limit_ns", n, |n| {
        let svc = Timeout::new(
            ConcurrencyLimit::new(service_fn(echo), BIG_LIMIT),
            CALL_TIMEOUT,
        );
        rt.block_on(serve(svc, n))
    });
    // A rate that never limits: what is left is the window's bookkeeping and
    // a reading of the clock per request.
    measure("tower_rate_limit_ns", n, |n| {
        let rate = Rate::new(u64::MAX, Duration::from_secs(1));
        // RateLimit arms its window's timer when it is made, so on the runtime.
        rt.block_on(async { serve(RateLimit::new(service_fn(echo), rate), n).await })
    });

    // A Buffer spawns its worker on the runtime it is made on, so each
    // repetition makes its own inside block_on.
    let mt = runtime(Some(WORKERS));
    measure("tower_buffer_16tasks_mt2_ns", n_buffer, |n| {
        mt.block_on(async { serve_shared(Buffer::new(service_fn(echo), BUFFER_BOUND), n).await })
    });
    // Over a limit of 1, every request waits for the one before it: each
    // goes through the worker, which waits for the limit.
    measure("tower_buffer_cl1_16tasks_mt2_ns", n_buffer, |n| {
        mt.block_on(async {
            let inner = ConcurrencyLimit::new(service_fn(echo), 1);
            serve_shared(Buffer::new(inner, BUFFER_BOUND), n).await
        })
    });

    // Not stacks, for reading the lines above: the handler alone, which the
    // compiler inlines into the loop; behind a BoxService, whose dynamic
    // call and boxed future are what a Go interface call is to it; and one
    // reading of the monotonic clock, which a Timeout and a RateLimit make
    // per request.
    measure("ref_bare_ns", n, |n| {
        rt.block_on(serve(service_fn(echo), n))
    });
    measure("ref_boxed_ns", n, |n| {
        rt.block_on(serve(BoxService::new(service_fn(echo)), n))
    });
    measure("ref_clock_ns", n, |n| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(tokio::time::Instant::now());
        }
        start.elapsed()
    });
}
