//! Store latency on a real file: one `record_decision` at a time, 32 tasks recording at once
//! (time per call, amortised: this is where group commit shows), and a claim + complete cycle.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use purko_protocol::{Autonomy, DecisionId, Effect, Evaluation, Kind, KindSource, Observation};
use purko_store::{ClaimRequest, DecisionRecord, SqliteStore, Store};
use serde_json::json;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir() -> Dir {
    Dir(std::env::temp_dir().join(format!("purko-store-bench-{}", ulid::Ulid::generate())))
}

fn template() -> DecisionRecord {
    DecisionRecord {
        evaluation: Evaluation {
            decision_id: new_id(),
            effect: Effect::Allow,
            code: None,
            tool: "read_file".into(),
            arguments: json!({"path": "/srv/reports/2025-q3.csv"}),
            kind: Some(Kind::Read),
            kind_source: Some(KindSource::Inferred),
            kind_reason: Some("the name starts with read".into()),
            kind_signals: Vec::new(),
            autonomy: Autonomy::Supervised,
            autonomy_cell: None,
            reasons: vec!["reads run at supervised".into()],
            matched_rules: Vec::new(),
            destinations: Vec::new(),
            validation_errors: Vec::new(),
            remediation: None,
            inference: true,
            kinds_digest: None,
            policy_digest: "8c1e22aa00112233".into(),
        },
        agent: "team/analyst".into(),
        session: "s-1".into(),
        step: "1".into(),
        created_at_ms: 1_700_000_000_000,
        outcome: None,
    }
}

fn new_id() -> DecisionId {
    DecisionId::new(None, true, "8c1e22aa", &ulid::Ulid::generate().to_string())
}

fn record(template: &DecisionRecord) -> DecisionRecord {
    let mut record = template.clone();
    record.evaluation.decision_id = new_id();
    record
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn record_decision(c: &mut Criterion) {
    let rt = runtime();
    let dir = temp_dir();
    let store = Arc::new(SqliteStore::open(&dir.0).expect("opens"));
    let template = template();
    let mut group = c.benchmark_group("record_decision");
    group.measurement_time(Duration::from_secs(5));

    group.bench_function("single", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    store
                        .record_decision(&record(&template))
                        .await
                        .expect("records");
                }
                start.elapsed()
            })
        });
    });

    group.bench_function("32_tasks_per_call", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let per_task = iters.div_ceil(32);
                let start = Instant::now();
                let tasks: Vec<_> = (0..32)
                    .map(|_| {
                        let (store, template) = (Arc::clone(&store), template.clone());
                        tokio::spawn(async move {
                            for _ in 0..per_task {
                                store
                                    .record_decision(&record(&template))
                                    .await
                                    .expect("records");
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("joins");
                }
                // Per call: the 32 tasks did per_task * 32 >= iters calls.
                let nanos =
                    start.elapsed().as_nanos() * u128::from(iters) / u128::from(per_task * 32);
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            })
        });
    });
    group.finish();
}

fn claim_complete(c: &mut Criterion) {
    let rt = runtime();
    let dir = temp_dir();
    let store = SqliteStore::open(&dir.0).expect("opens");
    let now = 1_700_000_000_000;
    let run = rt.block_on(store.start_run(now)).expect("a run");
    let observation = Observation::success(json!({"message_id": "m-1"}));
    let mut n = 0_u64;
    c.bench_function("claim_complete", |b| {
        b.iter(|| {
            n += 1;
            let key = format!("k{n}");
            rt.block_on(async {
                let request = ClaimRequest {
                    key: key.clone(),
                    agent: "team/analyst".into(),
                    tool: "send_email".into(),
                    arguments_digest: "d1".into(),
                    decision_id: new_id(),
                    run: run.clone(),
                    now_ms: now,
                    ttl_ms: 86_400_000,
                };
                store.claim(&request).await.expect("claims");
                store
                    .complete(&key, &run, &observation, now + 1)
                    .await
                    .expect("completes");
            });
        });
    });
}

criterion_group!(benches, record_decision, claim_complete);
criterion_main!(benches);
