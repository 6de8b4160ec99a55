//! The pipeline's own cost, and how fast a person's answer travels.
//!
//! - `allowed_read/direct` calls a local HTTP target straight; `allowed_read/pipeline` calls the
//!   same target through the whole pipeline (judge, execute, observe, record in a real `SQLite`
//!   file). Their difference is Purko's overhead; the target is a median under 50 µs.
//! - `ask_to_webhook`: from a call that needs a yes to its approval in the store and the
//!   webhook's request arriving (target: under 5 ms).
//! - `approve_to_release`: from `answer` to the waiting call returning (target: under 5 ms).
//!
//! Run with `cargo bench -p purko-engine --bench pipeline`.

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::{get, post};
use criterion::{Criterion, criterion_group, criterion_main};
use purko_engine::{CallRequest, Engine, EngineOptions};
use purko_protocol::{ApprovalScope, Status};
use purko_store::{Answer, SqliteStore};
use serde_json::json;
use tokio::sync::Notify;

struct Bench {
    runtime: tokio::runtime::Runtime,
    engine: Arc<Engine>,
    port: u16,
    hooks: Arc<Notify>,
    _dir: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn setup() -> Bench {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let hooks = Arc::new(Notify::new());
    let seen = Arc::clone(&hooks);
    let port = runtime.block_on(async move {
        let app = Router::new()
            .route(
                "/items",
                get(|| async { axum::Json(json!({"items": ["apple", "pear"]})) })
                    .post(|| async { axum::Json(json!({"order_id": 1})) }),
            )
            .route(
                "/hook",
                post(move || {
                    let seen = Arc::clone(&seen);
                    async move {
                        seen.notify_one();
                        "ok"
                    }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        port
    });
    let dir = std::env::temp_dir().join(format!("purko-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a folder");
    let manifest = dir.join("agent.yaml");
    std::fs::write(
        &manifest,
        format!(
            r"apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: bench, namespace: bench}}
spec:
  autonomyLevel: supervised
  tools:
    - name: list_items
      type: api
      description: List the items.
      endpoint: {{url: 'http://127.0.0.1:{port}/items', method: GET}}
    - name: create_order
      type: api
      description: Place an order.
      endpoint: {{url: 'http://127.0.0.1:{port}/items', method: POST}}
  guardrail:
    approvals:
      webhook: {{url: 'http://127.0.0.1:{port}/hook'}}
"
        ),
    )
    .expect("a manifest");
    let manifests = purko_config::load(&[manifest]).expect("the manifest loads");
    let engine = runtime.block_on(async {
        let store = SqliteStore::open(&dir.join("state")).expect("a store");
        Engine::new(&manifests, Arc::new(store), EngineOptions::default())
            .await
            .expect("an engine")
    });
    Bench {
        runtime,
        engine: Arc::new(engine),
        port,
        hooks,
        _dir: TempDir(dir),
    }
}

fn request(name: &str, step: String, wait: bool) -> CallRequest {
    CallRequest {
        agent: "bench/bench".into(),
        session: "bench".into(),
        step,
        name: name.into(),
        arguments: json!({}),
        idempotency_key: None,
        wait: Some(wait),
    }
}

fn allowed_read(c: &mut Criterion) {
    let bench = setup();
    purko_http::install_crypto();
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client");
    let url = format!("http://127.0.0.1:{}/items", bench.port);
    let mut group = c.benchmark_group("allowed_read");
    group.measurement_time(Duration::from_secs(10));
    // Both run on a worker task, as the server runs each call, so that the difference is the
    // pipeline and not where the future was polled.
    group.bench_function("direct", |b| {
        b.iter(|| {
            let client = client.clone();
            let url = url.clone();
            let body = bench
                .runtime
                .block_on(bench.runtime.spawn(async move {
                    let r = client.get(&url).send().await.expect("sent");
                    r.bytes().await.expect("a body")
                }))
                .expect("joined");
            black_box(body);
        });
    });
    group.bench_function("pipeline", |b| {
        b.iter(|| {
            let o = bench
                .runtime
                .block_on(bench.engine.call(request("list_items", "1".into(), true)))
                .expect("an observation");
            assert_eq!(o.status, Status::Success);
            black_box(o);
        });
    });
    group.finish();
    overhead(&bench);
}

/// The pipeline's own share of an allowed read: the median wall time of a call through the
/// pipeline less the mean time its backend took (from the engine's own latency histogram).
fn overhead(bench: &Bench) {
    const CALLS: usize = 5_000;
    let before = backend_sum_and_count(&bench.engine.metrics().render());
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let o = bench
            .runtime
            .block_on(bench.engine.call(request("list_items", "1".into(), true)))
            .expect("an observation");
        times.push(started.elapsed());
        black_box(o);
    }
    let after = backend_sum_and_count(&bench.engine.metrics().render());
    times.sort();
    let median = times[CALLS / 2].as_secs_f64() * 1e6;
    #[expect(clippy::cast_precision_loss, reason = "a count of calls")]
    let backend = (after.0 - before.0) / (after.1 - before.1) as f64 * 1e6;
    eprintln!(
        "allowed_read/overhead  median call {median:.1} µs, mean backend {backend:.1} µs, pipeline's own share {:.1} µs ({CALLS} calls)",
        median - backend
    );
}

fn backend_sum_and_count(metrics: &str) -> (f64, u64) {
    let value = |prefix: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(prefix))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a count"
    )]
    let count = value("purko_backend_latency_seconds_count") as u64;
    (value("purko_backend_latency_seconds_sum"), count)
}

fn approvals(c: &mut Criterion) {
    let bench = setup();
    let step = Arc::new(Mutex::new(0u64));
    let next = || {
        let mut n = step.lock().expect("a step");
        *n += 1;
        n.to_string()
    };
    c.bench_function("ask_to_webhook", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let step = next();
                total += bench.runtime.block_on(async {
                    let started = Instant::now();
                    let heard = bench.hooks.notified();
                    let o = bench
                        .engine
                        .call(request("create_order", step, false))
                        .await
                        .expect("an observation");
                    assert_eq!(o.status, Status::Pending);
                    heard.await;
                    started.elapsed()
                });
            }
            total
        });
    });
    c.bench_function("approve_to_release", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let step = next();
                total += bench.runtime.block_on(async {
                    let o = bench
                        .engine
                        .call(request("create_order", step.clone(), false))
                        .await
                        .expect("an observation");
                    let id = o.approval_id.expect("an approval");
                    let engine = Arc::clone(&bench.engine);
                    let waiting = tokio::spawn(async move {
                        let o = engine.call(request("create_order", step, true)).await;
                        (Instant::now(), o)
                    });
                    // Let the call reach its wait before answering.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    let answered = Instant::now();
                    bench
                        .engine
                        .answer(
                            &id,
                            Answer::Approve {
                                scope: ApprovalScope::Once,
                                comment: None,
                                by: "bench".into(),
                            },
                        )
                        .await
                        .expect("answered");
                    let (released, o) = waiting.await.expect("joined");
                    assert_eq!(o.expect("an observation").status, Status::Success);
                    released - answered
                });
            }
            total
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = allowed_read, approvals
}
criterion_main!(benches);
