//! Prometheus metrics: calls by tool, kind and effect; how long approvals wait; backend latency.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    agent: String,
    tool: String,
    kind: String,
    effect: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    status: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendLabels {
    backend: String,
}

/// The engine's metrics and their registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    outcomes: Family<OutcomeLabels, Counter>,
    approval_wait: Histogram,
    backend_latency: Family<BackendLabels, Histogram>,
}

fn latency_buckets() -> Histogram {
    // 100 µs to about 6.5 s.
    Histogram::new(exponential_buckets(0.0001, 2.0, 17))
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("purko");
        let calls = Family::<CallLabels, Counter>::default();
        let outcomes = Family::<OutcomeLabels, Counter>::default();
        // 100 ms to about 27 minutes: people answer in seconds or minutes.
        let approval_wait = Histogram::new(exponential_buckets(0.1, 2.0, 15));
        let backend_latency =
            Family::<BackendLabels, Histogram>::new_with_constructor(latency_buckets as fn() -> _);
        registry.register(
            "tool_calls",
            "Tool calls judged, by agent, tool, kind and effect",
            calls.clone(),
        );
        registry.register(
            "tool_outcomes",
            "Tool call outcomes, by status and code",
            outcomes.clone(),
        );
        registry.register(
            "approval_wait_seconds",
            "Time from an approval's creation to its answer",
            approval_wait.clone(),
        );
        registry.register(
            "backend_latency_seconds",
            "Time spent in the backend that executed a call",
            backend_latency.clone(),
        );
        Self {
            registry,
            calls,
            outcomes,
            approval_wait,
            backend_latency,
        }
    }
}

impl Metrics {
    pub fn judged(&self, agent: &str, tool: &str, kind: Option<&str>, effect: &str) {
        self.calls
            .get_or_create(&CallLabels {
                agent: agent.to_owned(),
                tool: tool.to_owned(),
                kind: kind.unwrap_or("unknown").to_owned(),
                effect: effect.to_owned(),
            })
            .inc();
    }

    pub fn outcome(&self, status: &str, code: Option<&str>) {
        self.outcomes
            .get_or_create(&OutcomeLabels {
                status: status.to_owned(),
                code: code.unwrap_or("").to_owned(),
            })
            .inc();
    }

    #[expect(
        clippy::cast_precision_loss,
        reason = "milliseconds fit an f64 exactly"
    )]
    pub fn approval_answered(&self, waited_ms: i64) {
        self.approval_wait.observe(waited_ms.max(0) as f64 / 1000.0);
    }

    pub fn backend(&self, backend: &str, seconds: f64) {
        self.backend_latency
            .get_or_create(&BackendLabels {
                backend: backend.to_owned(),
            })
            .observe(seconds);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
