//! The pipeline of DESIGN.md section 2, one engine for every entry point (HTTP API, MCP
//! gateway, executor loop): resolve, validate, classify and judge (the guard), check egress,
//! approve, claim the idempotency key, execute, observe, record. Egress comes before the
//! approval, where DESIGN.md lists it after: a person is never asked about a call that cannot
//! run, and the HTTP client checks every address again when it connects.
//!
//! Invariants: every call is judged and its decision recorded before anything runs, except
//! allowed reads, whose decision and outcome are written together once the read is done, behind
//! the answer (a read changes nothing, so only its audit line is at stake, and the commit is
//! most of the pipeline's cost). A write or `sends_out` call executes at most once per idempotency key.
//! What executes after an approval is the approved payload itself.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use purko_config::Manifests;
use purko_http::{ApiClient, ApiRequest};
use purko_mcp::Registry;
use purko_protocol::{
    Approval, ApprovalId, ApprovalStatus, Code, DecisionId, Effect, Evaluation, Kind, Observation,
    Status, ToolCall,
};
use purko_store::{
    Answer, CallKey, Claim, ClaimRequest, Decided, DecisionRecord, Outcome, RunId, Store,
};
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

use crate::agent::{AgentRuntime, Backend, View, tool_views};
use crate::approvals::{self, Asker, Gate};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::metrics::Metrics;
use crate::observe::observe;
use crate::once::{arguments_digest, idempotency_key};
use crate::seal::Sealer;
use crate::servers;

/// How the engine behaves beyond what manifests say.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// How long a stored outcome is replayed instead of executing again.
    pub idempotency_ttl: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            idempotency_ttl: Duration::from_hours(24),
        }
    }
}

/// One call as an entry point hands it over.
#[derive(Clone, Debug)]
pub struct CallRequest {
    /// `namespace/name` of the agent.
    pub agent: String,
    pub session: String,
    pub step: String,
    pub name: String,
    pub arguments: Value,
    /// The caller's own idempotency key; otherwise derived from session, step and tool.
    pub idempotency_key: Option<String>,
    /// Whether to wait for a person's answer; `None` follows the agent's setting.
    pub wait: Option<bool>,
}

/// The guarded pipeline.
pub struct Engine {
    store: Arc<dyn Store>,
    agents: BTreeMap<String, Arc<AgentRuntime>>,
    api: ApiClient,
    webhooks: reqwest::Client,
    run: RunId,
    secret: [u8; 32],
    sealer: Sealer,
    options: EngineOptions,
    metrics: Metrics,
    registry: Registry,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Builds every agent of the manifests and registers this process with the store.
    pub async fn new(
        manifests: &Manifests,
        store: Arc<dyn Store>,
        options: EngineOptions,
    ) -> Result<Self> {
        let servers = servers::specs(manifests)?;
        let startup = servers.startup_timeout();
        let registry = Registry::start(servers.specs);
        if startup > Duration::ZERO {
            registry.ready(startup).await;
        }
        let tools = registry.tools();
        let mut agents = BTreeMap::new();
        for agent in &manifests.agents {
            let mut runtime = AgentRuntime::build(agent)?;
            runtime.secrets.extend(servers.secrets.iter().cloned());
            runtime.rebuild(&tools)?;
            for (tool, unavailable) in &runtime.view().unavailable {
                tracing::warn!(
                    agent = %runtime.key,
                    tool = %tool,
                    "no '{}' backend here serves this tool; calls of it answer NO_RESULT: {}",
                    unavailable.backend,
                    unavailable.why
                );
            }
            agents.insert(runtime.key.clone(), Arc::new(runtime));
        }
        servers::follow(&registry, agents.values().cloned().collect());
        purko_http::install_crypto();
        let run = store.start_run(now_ms()).await?;
        let secret = store.idempotency_secret().await?;
        let webhooks = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| Error::Webhook(e.to_string()))?;
        Ok(Self {
            store,
            agents,
            api: ApiClient::new()?,
            webhooks,
            run,
            sealer: Sealer::new(&secret),
            secret,
            options,
            metrics: Metrics::default(),
            registry,
        })
    }

    /// The registered MCP servers.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// `GET /api/mcp/tools`: every registered server with its status, and its tools with their
    /// kinds (as the agent's guardrail sees them when an agent is named).
    pub fn mcp_tools(&self, agent: Option<&str>) -> Result<Value> {
        let view = agent.map(|a| self.agent(a).map(|a| a.view())).transpose()?;
        Ok(servers::listing(&self.registry, view.as_deref()))
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The agents' keys, `namespace/name`, sorted.
    pub fn agent_keys(&self) -> impl Iterator<Item = &str> {
        self.agents.keys().map(String::as_str)
    }

    pub fn agent(&self, key: &str) -> Result<&Arc<AgentRuntime>> {
        self.agents.get(key).ok_or_else(|| Error::UnknownAgent {
            agent: key.to_owned(),
            known: if self.agents.is_empty() {
                "none".into()
            } else {
                self.agents.keys().cloned().collect::<Vec<_>>().join(", ")
            },
        })
    }

    /// The tools an agent can see, with kind, source and reason.
    pub fn tools(&self, agent: &str) -> Result<Vec<Value>> {
        Ok(tool_views(self.agent(agent)?))
    }

    /// Keeps this process's run alive in the store and expires approvals nobody answered.
    pub fn spawn_housekeeping(self: &Arc<Self>) -> JoinHandle<()> {
        let engine = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut beats = 0u32;
            loop {
                tick.tick().await;
                if let Err(e) = engine.store.expire_approvals(now_ms()).await {
                    tracing::warn!("cannot expire approvals: {e}");
                }
                beats += 1;
                if beats.is_multiple_of(10)
                    && let Err(e) = engine.store.heartbeat(&engine.run, now_ms()).await
                {
                    tracing::warn!("cannot record this process's heartbeat: {e}");
                }
            }
        })
    }

    /// Runs one call through the whole pipeline. A refusal is an `Ok` observation; `Err` is for
    /// an unknown agent or a store that failed.
    ///
    /// The pipeline runs on its own task: a caller that goes away (a closed HTTP connection)
    /// does not cut a call between its idempotency claim and its outcome, which would leave the
    /// key held by a call that never finishes.
    pub async fn call(self: &Arc<Self>, request: CallRequest) -> Result<Observation> {
        self.call_with_asker(request, None).await
    }

    /// [`Engine::call`], with a channel that can put an approval to the person at the caller's
    /// end while the call waits (unless the agent turned `guardrail.approvals.elicitation`
    /// off). The approval stays open on the API and the CLI too: the first answer wins.
    pub async fn call_with_asker(
        self: &Arc<Self>,
        request: CallRequest,
        asker: Option<Arc<dyn Asker>>,
    ) -> Result<Observation> {
        let engine = Arc::clone(self);
        // Boxed before it is spawned: the pipeline's state machine is large, and every move of
        // an unboxed future on its way into the task copies all of it.
        let pipeline = Box::pin(async move { engine.pipeline(request, asker.as_deref()).await });
        tokio::spawn(pipeline)
            .await
            .map_err(|e| Error::Interrupted(e.to_string()))?
    }

    async fn pipeline(
        &self,
        request: CallRequest,
        asker: Option<&dyn Asker>,
    ) -> Result<Observation> {
        let agent = Arc::clone(self.agent(&request.agent)?);
        let created_at_ms = now_ms();
        let started = Instant::now();
        let call = ToolCall::new(request.name.clone(), request.arguments.clone());
        let mut view = agent.view();
        let mut evaluation = view.guard.evaluate(&call);
        if evaluation.code == Some(Code::ToolNotFound) && agent.uses_mcp() {
            // Seed 000: a name missing from the cached map asks every server again first.
            self.registry.refresh().await;
            agent.rebuild(&self.registry.tools())?;
            view = agent.view();
            evaluation = view.guard.evaluate(&call);
        }
        self.metrics.judged(
            &agent.key,
            &request.name,
            evaluation.kind.map(Kind::as_str),
            evaluation.effect.as_str(),
        );
        let record = |outcome: Option<Outcome>| DecisionRecord {
            evaluation: evaluation.clone(),
            agent: agent.key.clone(),
            session: request.session.clone(),
            step: request.step.clone(),
            created_at_ms,
            outcome,
        };

        if evaluation.effect == Effect::Deny {
            let observation = refusal(&view, &request, &evaluation);
            let outcome = Self::outcome(&observation, started, None);
            self.store.record_decision(&record(Some(outcome))).await?;
            return Ok(self.finish(observation));
        }
        if evaluation.effect == Effect::Allow && evaluation.kind == Some(Kind::Read) {
            let observation = self
                .execute(
                    &agent,
                    &view,
                    &request,
                    &evaluation,
                    &request.arguments,
                    None,
                )
                .await;
            let outcome = Self::outcome(&observation, started, None);
            // Write-behind: a read changed nothing, so its audit line need not hold up the
            // answer. The store commits it with a later batch, within milliseconds.
            self.store.record_decision_later(record(Some(outcome)));
            return Ok(self.finish(observation));
        }

        self.store.record_decision(&record(None)).await?;
        // Before anyone is asked: a person should never approve a call that cannot run (a
        // refused destination, code the pre-execution check refuses).
        let mut unrunnable = self.egress(&agent, &evaluation).await;
        // The run checks the code in any case; here only when a person would be asked.
        if unrunnable.is_none()
            && evaluation.effect == Effect::Ask
            && let Some(Backend::Code(code)) = view.backends.get(&request.name)
        {
            unrunnable = code.check(&request.arguments).await;
        }
        let mut approval = None;
        let stopped = match unrunnable {
            Some(refused) => Some(refused.with_decision(evaluation.decision_id.clone())),
            None if evaluation.effect == Effect::Ask => {
                match approvals::gate(self, &agent, &request, &evaluation, asker).await? {
                    Gate::Go(approved) => {
                        approval = approved;
                        None
                    }
                    Gate::Stop(observation) => Some(observation),
                }
            }
            None => None,
        };
        if let Some(observation) = stopped {
            let outcome = Self::outcome(&observation, started, None);
            self.store
                .record_outcome(&evaluation.decision_id, &outcome)
                .await?;
            return Ok(self.finish(observation));
        }
        let arguments = approval
            .as_ref()
            .map_or(&request.arguments, |a| &a.arguments);
        let observation = self
            .once(&agent, &view, &request, &evaluation, arguments)
            .await?;
        let outcome = Self::outcome(&observation, started, approval.map(|a| a.id));
        self.store
            .record_outcome(&evaluation.decision_id, &outcome)
            .await?;
        Ok(self.finish(observation))
    }

    /// Answers an approval: the first answer wins. A yes for the session also grants the same
    /// tool with the same arguments again in that session (the store keeps the grant in the
    /// same transaction as the answer).
    pub async fn answer(&self, id: &ApprovalId, answer: Answer) -> Result<Decided> {
        let decided = self.store.decide_approval(id, &answer, now_ms()).await?;
        if let Decided::Now(approval) = &decided {
            let at = approval.decided_at_ms.unwrap_or_else(now_ms);
            self.metrics.approval_answered(at - approval.created_at_ms);
        }
        Ok(decided)
    }

    /// A stored decision and its account for a person, with a note when the kinds file or the
    /// policy that judged it is no longer the one in force.
    pub async fn explain(&self, id: &DecisionId) -> Result<Option<(DecisionRecord, String)>> {
        let Some(record) = self.store.decision(id).await? else {
            return Ok(None);
        };
        let mut text = purko_guard::explain(&record.evaluation);
        if let Some(outcome) = &record.outcome {
            let o = &outcome.observation;
            let code = o.code.map(|c| format!(" {c}")).unwrap_or_default();
            let replayed = if o.replayed { " (replayed)" } else { "" };
            let _ = writeln!(
                text,
                "  ended       {}{code}{replayed} after {} µs",
                o.status.as_str(),
                outcome.duration_us
            );
            if let Some(approval) = &outcome.approval_id {
                let _ = writeln!(text, "  approval    {approval}");
            }
        }
        if let Ok(agent) = self.agent(&record.agent) {
            let view = agent.view();
            let then_kinds = record.evaluation.kinds_digest.as_deref();
            if then_kinds != view.guard.kinds_digest() {
                text.push_str(
                    "  note        the tool_kinds.yaml in force now differs from the one that judged this call\n",
                );
            }
            if record.evaluation.policy_digest != view.guard.policy_digest() {
                text.push_str(
                    "  note        the agent's rules, destinations or autonomy have changed since this call was judged\n",
                );
            }
        } else {
            text.push_str("  note        this decision's agent is not loaded in this process\n");
        }
        Ok(Some((record, text)))
    }

    /// A tag saying this store's Purko made `fields`, for a token a client echoes back (the
    /// `requestState` of an approval asked by input); any process on the same store knows it.
    pub fn seal(&self, fields: &[&str]) -> String {
        self.sealer.seal(fields)
    }

    /// Whether `tag` is [`Engine::seal`] of `fields`.
    pub fn sealed(&self, fields: &[&str], tag: &str) -> bool {
        self.sealer.opens(fields, tag)
    }

    pub(crate) fn webhooks(&self) -> &reqwest::Client {
        &self.webhooks
    }

    fn finish(&self, observation: Observation) -> Observation {
        self.metrics.outcome(
            observation.status.as_str(),
            observation.code.map(Code::as_str),
        );
        observation
    }

    fn outcome(
        observation: &Observation,
        started: Instant,
        approval_id: Option<ApprovalId>,
    ) -> Outcome {
        Outcome {
            observation: observation.clone(),
            finished_at_ms: now_ms(),
            duration_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            approval_id,
        }
    }

    /// Claims the idempotency key of a write or `sends_out` call and executes it. (Egress was
    /// checked before the approval; the HTTP client checks every address again as it connects.)
    async fn once(
        &self,
        agent: &AgentRuntime,
        view: &View,
        request: &CallRequest,
        evaluation: &Evaluation,
        arguments: &Value,
    ) -> Result<Observation> {
        let decision = evaluation.decision_id.clone();
        let key = match evaluation.kind {
            Some(Kind::Read) => None,
            _ => Some(request.idempotency_key.clone().unwrap_or_else(|| {
                idempotency_key(&self.secret, &request.session, &request.step, &request.name)
            })),
        };
        if let Some(key) = &key {
            let claim = self
                .store
                .claim(&ClaimRequest {
                    key: key.clone(),
                    agent: agent.key.clone(),
                    tool: request.name.clone(),
                    arguments_digest: arguments_digest(arguments),
                    decision_id: decision.clone(),
                    run: self.run.clone(),
                    now_ms: now_ms(),
                    ttl_ms: i64::try_from(self.options.idempotency_ttl.as_millis())
                        .unwrap_or(i64::MAX),
                })
                .await?;
            if let Some(observation) = claim_answer(claim, request) {
                return Ok(observation.with_decision_if_none(decision));
            }
        }
        let observation = self
            .execute(agent, view, request, evaluation, arguments, key.as_deref())
            .await;
        if let Some(key) = &key {
            if nothing_happened(&observation) {
                self.store.release(key, &self.run).await?;
            } else {
                self.store
                    .complete(key, &self.run, &observation, now_ms())
                    .await?;
            }
        }
        Ok(observation)
    }

    /// URLs among a `sends_out` call's destinations must pass the egress guard too: Purko
    /// never hands a model-chosen internal address to anyone.
    async fn egress(&self, agent: &AgentRuntime, evaluation: &Evaluation) -> Option<Observation> {
        for destination in &evaluation.destinations {
            if !destination.value.contains("://") {
                continue;
            }
            if let Some(blocked) = agent.egress.refuses(&destination.value).await {
                return Some(Observation::failure(
                    Status::Denied,
                    Code::EgressBlocked,
                    format!("argument '{}': {blocked}", destination.argument),
                    format!(
                        "call {} with a public http or https destination, or ask the operator to admit this one in destinations.allow",
                        evaluation.tool
                    ),
                ));
            }
        }
        None
    }

    async fn execute(
        &self,
        agent: &AgentRuntime,
        view: &View,
        request: &CallRequest,
        evaluation: &Evaluation,
        arguments: &Value,
        key: Option<&str>,
    ) -> Observation {
        let Some(backend) = view.backends.get(&request.name) else {
            return no_result(&request.name).with_decision(evaluation.decision_id.clone());
        };
        let started = Instant::now();
        let empty = Map::new();
        let observation = match backend {
            Backend::Api(tool) => {
                self.api
                    .call(ApiRequest {
                        tool,
                        arguments: arguments.as_object().unwrap_or(&empty),
                        idempotency_key: key,
                        egress: &agent.egress,
                        max_body_bytes: agent.max_output_bytes,
                    })
                    .await
            }
            Backend::Mcp => {
                self.registry
                    .call(
                        &request.name,
                        arguments.as_object().cloned().unwrap_or_default(),
                        key,
                    )
                    .await
            }
            Backend::Code(code) => code.run(arguments, &agent.egress).await,
            Backend::Analysis => crate::analysis::run(arguments).await,
        };
        self.metrics
            .backend(backend.name(), started.elapsed().as_secs_f64());
        observe(observation, &agent.secrets, agent.max_output_bytes)
            .with_decision(evaluation.decision_id.clone())
    }
}

trait WithDecision {
    fn with_decision_if_none(self, id: DecisionId) -> Self;
}

impl WithDecision for Observation {
    fn with_decision_if_none(mut self, id: DecisionId) -> Self {
        if self.decision_id.is_none() {
            self.decision_id = Some(id);
        }
        self
    }
}

/// What a claim that is not ours answers, if anything.
fn claim_answer(claim: Claim, request: &CallRequest) -> Option<Observation> {
    let tool = &request.name;
    match claim {
        Claim::Claimed => None,
        Claim::Replay(mut stored) => {
            stored.replayed = true;
            if !stored.is_success() {
                let then = stored.remediation.take().unwrap_or_default();
                stored.remediation = Some(format!(
                    "{then} This is the stored outcome of session '{}' step '{}'; to try {tool} again, call it with a new step.",
                    request.session, request.step
                ).trim_start().to_owned());
            }
            Some(stored)
        }
        Claim::InProgress { .. } => Some(Observation::error(
            Code::DuplicateInProgress,
            format!(
                "the same call of {tool} (session '{}', step '{}') is running right now",
                request.session, request.step
            ),
            format!(
                "wait for the running call to finish, then call {tool} again with the same session and step to get its result"
            ),
        )),
        Claim::Mismatch { .. } => Some(Observation::error(
            Code::IdempotencyMismatch,
            format!(
                "session '{}' step '{}' already called {tool} with other arguments",
                request.session, request.step
            ),
            format!("use a new step for a different call of {tool}"),
        )),
        Claim::Unknown { .. } => Some(Observation::error(
            Code::OutcomeUnknown,
            format!(
                "an earlier run of this call of {tool} was interrupted and may or may not have taken effect"
            ),
            "do not retry: ask the operator to check the target and clear the record".to_owned(),
        )),
    }
}

/// Outcomes after which the backend has certainly not acted, so the key is given back.
fn nothing_happened(observation: &Observation) -> bool {
    matches!(
        observation.code,
        Some(
            Code::RateLimitExceeded
                | Code::UpstreamUnavailable
                | Code::EgressBlocked
                | Code::ValidationFailed
                | Code::NoResult
        )
    )
}

fn no_result(name: &str) -> Observation {
    Observation::error(
        Code::NoResult,
        format!("Tool '{name}' returned no result"),
        format!("{name} has no backend that can run it here; use another tool"),
    )
}

/// The observation of a denied call.
fn refusal(view: &View, request: &CallRequest, evaluation: &Evaluation) -> Observation {
    let code = evaluation.code.unwrap_or(Code::DeniedByPolicy);
    if code == Code::ToolNotFound
        && let Some(unavailable) = view.unavailable.get(&request.name)
    {
        let mut o = no_result(&request.name);
        o.remediation = Some(unavailable.why.clone());
        return o.with_decision(evaluation.decision_id.clone());
    }
    let status = match code {
        Code::ToolNotFound | Code::ValidationFailed => Status::Error,
        _ => Status::Denied,
    };
    let message = evaluation
        .reasons
        .first()
        .cloned()
        .unwrap_or_else(|| format!("{} refused", request.name));
    let remediation = evaluation
        .remediation
        .clone()
        .unwrap_or_else(|| format!("do not call {} this way again", request.name));
    let mut o = Observation::failure(status, code, message, remediation);
    if code == Code::ValidationFailed && !evaluation.validation_errors.is_empty() {
        o.observation = Some(json!({ "errors": evaluation.validation_errors }));
    }
    o.with_decision(evaluation.decision_id.clone())
}

/// The key of "the same call" for approvals.
pub(crate) fn call_key(agent: &AgentRuntime, request: &CallRequest, digest: &str) -> CallKey {
    CallKey {
        agent: agent.key.clone(),
        session: request.session.clone(),
        step: request.step.clone(),
        tool: request.name.clone(),
        arguments_digest: digest.to_owned(),
    }
}

pub(crate) fn approval_for(
    agent: &AgentRuntime,
    request: &CallRequest,
    evaluation: &Evaluation,
    digest: String,
    now: i64,
) -> Approval {
    let timeout = i64::try_from(agent.approval_timeout.as_millis()).unwrap_or(i64::MAX);
    Approval {
        id: ApprovalId::new(&ulid::Ulid::generate().to_string()),
        decision_id: evaluation.decision_id.clone(),
        agent: agent.key.clone(),
        session: request.session.clone(),
        step: request.step.clone(),
        tool: request.name.clone(),
        kind: evaluation.kind.unwrap_or(Kind::Write),
        kind_source: evaluation
            .kind_source
            .unwrap_or(purko_protocol::KindSource::Unsure),
        kind_reason: evaluation.kind_reason.clone().unwrap_or_default(),
        kind_signals: evaluation.kind_signals.clone(),
        arguments: request.arguments.clone(),
        arguments_digest: digest,
        reasons: evaluation.reasons.clone(),
        created_at_ms: now,
        expires_at_ms: now.saturating_add(timeout),
        status: ApprovalStatus::Pending,
        scope: None,
        decided_at_ms: None,
        decided_by: None,
        comment: None,
    }
}
