//! The MCP server of one agent. Every `tools/call` goes through the engine's pipeline: the
//! gateway adds no judgement of its own and never runs a tool itself.
//!
//! A call is keyed by (session, step), which is what makes a repeated call run once: the
//! session is `_meta["purko.io/session"]` when the client names it, else the MCP session (or
//! this connection, on stdio); the step a per-session counter unless the client names it in
//! `_meta["purko.io/step"]`. On 2026-07-28 over HTTP there is no MCP session: each request is a
//! session of its own unless the client names one, so a repeat can only be recognised when the
//! client sends its session and step (or its own idempotency key).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use axum::http::request::Parts;
use purko_engine::{Asker, CallRequest, Engine, McpServers, View, arguments_digest};
use purko_protocol::{Observation, Status};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, RequestMetaObject,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::changes::{self, Subscriptions, To};
use crate::elicit::{self, ClientAsker, ProgressTo};
use crate::error::{Error, Result};
use crate::listing::mcp_tool;
use crate::result::call_tool_result;

/// `_meta` key a client sets to name the call's step itself (a string or a number).
pub const META_STEP: &str = "purko.io/step";
/// `_meta` key for the caller's own idempotency key.
pub const META_IDEMPOTENCY_KEY: &str = "purko.io/idempotency-key";
/// `_meta` key a client sets to name its conversation itself: the 2026-07-28 revision has no
/// MCP session, so without it every request over HTTP is a session of its own.
pub const META_SESSION: &str = "purko.io/session";

const INSTRUCTIONS: &str = "These tools are guarded by Purko. Every call is judged against \
the agent's policy: reads run, writes and calls that send data out may wait for a person's \
approval, and refused calls come back as errors with a code and a remediation that says \
what to do instead. A write runs once per step: calling again with the same `purko.io/step` \
(and `purko.io/session`, where the transport has no session) in `_meta` returns the stored \
result.";

/// One agent's guarded tools as an MCP server.
pub struct Gateway {
    engine: Arc<Engine>,
    agent: String,
    listing: Arc<Listing>,
    /// The session of a connection that has no MCP session id (stdio).
    connection: String,
    steps: Arc<AtomicU64>,
    /// Where this gateway's HTTP session is told to the fast path (`http.rs`), and under
    /// which id once it is.
    sessions: Option<Arc<Sessions>>,
    registered: std::sync::Mutex<Option<String>>,
    /// Dropped with the gateway, which ends the task telling its client of list changes.
    alive: tokio::sync::watch::Sender<()>,
    /// The resources this gateway's client subscribed to (before 2026-07-28).
    subscriptions: Subscriptions,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("agent", &self.agent)
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway for `agent` (`namespace/name`); an unknown agent is an error here, before any
    /// client connects.
    pub fn new(engine: Arc<Engine>, agent: &str) -> Result<Self> {
        engine.agent(agent)?;
        Ok(Self {
            subscriptions: Subscriptions::new(engine.registry().clone()),
            engine,
            agent: agent.to_owned(),
            connection: format!("mcp-{}", ulid::Ulid::generate()),
            steps: Arc::new(AtomicU64::new(0)),
            sessions: None,
            registered: std::sync::Mutex::new(None),
            listing: Arc::new(Listing::default()),
            alive: tokio::sync::watch::channel(()).0,
        })
    }

    /// Shares one cache of the converted tool list between gateways of the same agent (the
    /// HTTP service makes a gateway per session, or per request on the stateless revision).
    #[must_use]
    pub fn with_listing(mut self, listing: Arc<Listing>) -> Self {
        self.listing = listing;
        self
    }

    /// Tells `sessions` of this gateway's HTTP session once the client has initialized it.
    #[must_use]
    pub(crate) fn with_sessions(mut self, sessions: Arc<Sessions>) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// A gateway counting the steps of a session another gateway serves (the fast path's).
    #[must_use]
    pub(crate) fn with_steps(mut self, steps: Arc<AtomicU64>) -> Self {
        self.steps = steps;
        self
    }

    /// The agent this gateway serves.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Serves MCP on this process's standard input and output until the client closes stdin.
    pub async fn serve_stdio(self) -> Result<()> {
        let running = self
            .serve(crate::stdio::transport())
            .await
            .map_err(|e| Error::Transport(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| Error::Transport(e.to_string()))?;
        Ok(())
    }

    /// The engine's request for one `tools/call`.
    fn request(&self, params: &CallToolRequestParams, incoming: &Incoming) -> CallRequest {
        let meta = |key: &str| -> Option<Value> {
            params
                .meta
                .as_ref()
                .and_then(|m| m.get(key))
                .or_else(|| incoming.meta.get(key))
                .cloned()
        };
        let session = match meta(META_SESSION) {
            Some(Value::String(s)) if !s.is_empty() => s,
            _ => incoming
                .session_id
                .as_ref()
                .map_or_else(|| self.connection.clone(), |id| format!("mcp-{id}")),
        };
        let counted = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        let step = match meta(META_STEP) {
            Some(Value::String(s)) if !s.is_empty() => s,
            Some(Value::Number(n)) => n.to_string(),
            _ => counted.to_string(),
        };
        let idempotency_key = match meta(META_IDEMPOTENCY_KEY) {
            Some(Value::String(s)) if !s.is_empty() => Some(s),
            _ => None,
        };
        CallRequest {
            agent: self.agent.clone(),
            session,
            step,
            name: params.name.to_string(),
            arguments: Value::Object(params.arguments.clone().unwrap_or_default()),
            idempotency_key,
            wait: None,
        }
    }

    /// Protocol 2026-07-28: a call sent again with an answer to the approval form. The
    /// `requestState` names the approval with Purko's seal of its id and agent, so a client
    /// can echo it but not write one (an approval id seen on the dashboard or the CLI is not
    /// enough). It counts only for the same agent, tool and arguments, and the same session
    /// where the request has one (stdio, or HTTP with `Mcp-Session-Id`); stateless HTTP
    /// requests have no session of their own and take the approval's. The answer is recorded (first answer wins) and the call goes
    /// on as that approval's session and step.
    async fn resume(
        &self,
        state: &str,
        params: &CallToolRequestParams,
        stateless: bool,
        call: &mut CallRequest,
    ) -> Result<(), ErrorData> {
        let stranger = || {
            ErrorData::invalid_params(
                "requestState does not belong to this call; send the call again without it",
                None,
            )
        };
        let (id, seal) = elicit::approval_of_state(state).ok_or_else(stranger)?;
        // Made by this store's Purko for this agent, not written by the client.
        if !self.engine.sealed(&[id.as_str(), &call.agent], seal) {
            return Err(stranger());
        }
        let approval = self
            .engine
            .store()
            .approval(&id)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
            .ok_or_else(stranger)?;
        if approval.agent != call.agent
            || (!stateless && approval.session != call.session)
            || approval.tool != call.name
            || approval.arguments_digest != arguments_digest(&call.arguments)
        {
            return Err(stranger());
        }
        call.session.clone_from(&approval.session);
        call.step.clone_from(&approval.step);
        if let Some(answer) = elicit::response_of(params.input_responses.as_ref()) {
            self.engine
                .answer(&id, answer)
                .await
                .map_err(|e| internal(&e))?;
        }
        Ok(())
    }

    /// The registered servers whose prompts and resources this agent sees.
    fn seen(&self) -> Result<McpServers, ErrorData> {
        let agent = self.engine.agent(&self.agent).map_err(|e| internal(&e))?;
        Ok(agent.view().mcp_servers.clone())
    }

    /// Whether this agent's approvals may be asked through this client.
    fn may_elicit(&self, capabilities: Option<&ClientCapabilities>) -> bool {
        self.engine.agent(&self.agent).is_ok_and(|a| a.elicitation)
            && elicit::client_can_elicit(capabilities)
    }

    /// The `InputRequired` answer for a call whose approval waits, when it still waits.
    async fn ask_by_input(&self, observation: &Observation) -> Option<CallToolResponse> {
        if observation.status != Status::Pending {
            return None;
        }
        let id = observation.approval_id.as_ref()?;
        let approval = self.engine.store().approval(id).await.ok()??;
        let seal = self.engine.seal(&[approval.id.as_str(), &approval.agent]);
        Some(elicit::input_required(&approval, &seal).into())
    }

    /// One `tools/call`, from rmcp's handler or straight from the HTTP fast path.
    pub(crate) async fn call(
        &self,
        request: CallToolRequestParams,
        incoming: Incoming,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut call = self.request(&request, &incoming);
        let elicit = self.may_elicit(incoming.capabilities.as_ref());
        let modern = incoming
            .protocol
            .as_ref()
            .is_some_and(|v| *v >= ProtocolVersion::V_2026_07_28);
        let progress = incoming.meta.get_progress_token().zip(incoming.progress);
        let asker: Option<Arc<dyn Asker>> = if modern {
            if let Some(state) = &request.request_state {
                self.resume(state, &request, incoming.stateless, &mut call)
                    .await?;
            }
            if elicit {
                // The form goes back as the call's answer: the call must not hold.
                call.wait = Some(false);
            }
            progress.map(|progress| -> Arc<dyn Asker> {
                Arc::new(ClientAsker {
                    elicit: None,
                    progress: Some(progress),
                })
            })
        } else if elicit || progress.is_some() {
            Some(Arc::new(ClientAsker {
                elicit: incoming.peer.filter(|_| elicit),
                progress,
            }))
        } else {
            None
        };
        // Boxed: callers move this future into tasks of their own, and the engine's future is
        // large.
        match Box::pin(self.engine.call_with_asker(call, asker)).await {
            Ok(observation) => {
                if modern
                    && elicit
                    && let Some(ask) = self.ask_by_input(&observation).await
                {
                    return Ok(ask);
                }
                Ok(call_tool_result(&observation).into())
            }
            Err(e) => {
                // Purko itself failed (the store, mostly): the model gets a plain error it can
                // report, the log gets the detail.
                tracing::error!(agent = %self.agent, tool = %request.name, "the call failed: {e}");
                Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "INTERNAL: Purko could not run the call: {e}\nremediation: {}",
                    e.hint()
                ))])
                .into())
            }
        }
    }
}

impl Gateway {
    /// An HTTP session on a revision before 2026-07-28 is known to the fast path once its
    /// client has initialized it: its step counter, revision and whether its client can show a
    /// form (then its calls stay on rmcp's path, which routes `elicitation/create`).
    fn register(&self, context: &NotificationContext<RoleServer>) {
        let (Some(sessions), Some(info)) = (&self.sessions, context.peer.peer_info()) else {
            return;
        };
        let Some(id) = context
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
        else {
            return;
        };
        let session = Session {
            steps: Arc::clone(&self.steps),
            protocol: info.protocol_version.clone(),
            elicits: self.may_elicit(Some(&info.capabilities)),
            capabilities: info.capabilities.clone(),
            routed_at_ms: AtomicI64::new(purko_engine::now_ms()),
        };
        sessions.insert(id.to_owned(), Arc::new(session));
        *self
            .registered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(id.to_owned());
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let registered = self
            .registered
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let (Some(sessions), Some(id)) = (&self.sessions, registered) {
            sessions.remove(&id);
        }
    }
}

/// The HTTP sessions (revisions before 2026-07-28) of one agent's gateway, by session id.
#[derive(Debug, Default)]
pub(crate) struct Sessions(std::sync::Mutex<std::collections::HashMap<String, Arc<Session>>>);

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Arc<Session>>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn insert(&self, id: String, session: Arc<Session>) {
        self.lock().insert(id, session);
    }

    fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }
}

/// What the fast path needs of a session rmcp keeps.
#[derive(Debug)]
pub(crate) struct Session {
    pub steps: Arc<AtomicU64>,
    pub protocol: ProtocolVersion,
    pub capabilities: ClientCapabilities,
    /// Whether calls may ask the client's person (they then stay on rmcp's path).
    pub elicits: bool,
    /// When a call of this session last went through rmcp's session worker, whose idle limit
    /// counts only the traffic it sees.
    pub routed_at_ms: AtomicI64,
}

/// What a `tools/call` brings besides its parameters: taken from rmcp's request context, or
/// read off the HTTP request by the fast path (`http.rs`).
pub(crate) struct Incoming {
    /// The request's `_meta` (rmcp moves it out of the parameters into the context).
    pub meta: RequestMetaObject,
    /// The `Mcp-Session-Id` header, on HTTP sessions of revisions before 2026-07-28.
    pub session_id: Option<String>,
    /// An HTTP request with no MCP session.
    pub stateless: bool,
    pub protocol: Option<ProtocolVersion>,
    pub capabilities: Option<ClientCapabilities>,
    /// The client, to elicit from on revisions before 2026-07-28; none on the fast path,
    /// which serves only the 2026-07-28 revision.
    pub peer: Option<Peer<RoleServer>>,
    /// Where progress goes while the call waits, when the request carries a progress token.
    pub progress: Option<ProgressTo>,
}

impl Incoming {
    fn of(mut context: RequestContext<RoleServer>) -> Self {
        let session_id = context
            .extensions
            .get::<Parts>()
            .map(|parts| parts.headers.get("mcp-session-id"));
        Self {
            session_id: session_id
                .flatten()
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            stateless: matches!(session_id, Some(None)),
            protocol: context.protocol_version(),
            capabilities: context.client_capabilities(),
            meta: std::mem::take(&mut context.meta),
            progress: Some(ProgressTo::Peer(context.peer.clone())),
            peer: Some(context.peer),
        }
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("purko", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let agent = self.engine.agent(&self.agent).map_err(|e| internal(&e))?;
        let tools = self.listing.tools(agent.view());
        Ok(ListToolsResult::with_all_items(tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, Incoming::of(context)).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.register(&context);
        let Ok(agent) = self.engine.agent(&self.agent) else {
            return;
        };
        let mut gone = self.alive.subscribe();
        tokio::spawn(changes::follow(
            To::Session(context.peer),
            Arc::clone(agent),
            Arc::clone(&self.listing),
            self.engine.registry().clone(),
            self.subscriptions.held(),
            async move {
                let _ = gone.changed().await;
            },
        ));
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let seen = self.seen()?;
        self.subscriptions
            .subscribe(&|s| seen.contains(s), &request.uri)
            .await
            .map_err(|e| passed_error(&e))
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri).await;
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp keeps what the capabilities offer; a resource no server can tell of is found
        // out on the stream, and left out of it.
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let agent = Arc::clone(self.engine.agent(&self.agent).map_err(|e| internal(&e))?);
        let seen = self.seen()?;
        let registry = self.engine.registry();
        let accepted = context.accepted().clone();
        // Given back when the stream ends, however it ends.
        let subscriptions = Subscriptions::new(registry.clone());
        for uri in accepted.resource_subscriptions.iter().flatten() {
            if let Err(e) = subscriptions.subscribe(&|s| seen.contains(s), uri).await {
                tracing::info!(agent = %self.agent, "a listen stream left out {uri}: {e}");
            }
        }
        changes::follow(
            To::Stream(context.sink().clone(), accepted),
            agent,
            Arc::clone(&self.listing),
            registry.clone(),
            subscriptions.held(),
            context.cancelled(),
        )
        .await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let seen = self.seen()?;
        let prompts = self.engine.registry().prompts(&|s| seen.contains(s)).await;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let seen = self.seen()?;
        let registry = self.engine.registry();
        let prompt = registry
            .prompt(&|s| seen.contains(s), &request.name, request.arguments)
            .await
            .map_err(|e| passed_error(&e))?;
        Ok(prompt.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let seen = self.seen()?;
        let resources = self
            .engine
            .registry()
            .resources(&|s| seen.contains(s))
            .await;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let seen = self.seen()?;
        let registry = self.engine.registry();
        let templates = registry.resource_templates(&|s| seen.contains(s)).await;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let seen = self.seen()?;
        let registry = self.engine.registry();
        let resource = registry
            .read_resource(&|s| seen.contains(s), &request.uri)
            .await
            .map_err(|e| passed_error(&e))?;
        Ok(resource.into())
    }
}

/// The agent's tools as MCP tools, converted once per view of the agent: the view is swapped
/// whenever an upstream's tool list changes, so it is the cache's key (held, so its address
/// cannot be reused while cached).
#[derive(Debug, Default)]
pub struct Listing {
    cached: std::sync::Mutex<Option<Converted>>,
}

/// A view and its tools as MCP tools.
type Converted = (Arc<View>, Arc<Vec<Tool>>);

impl Listing {
    pub(crate) fn tools(&self, view: Arc<View>) -> Arc<Vec<Tool>> {
        let mut cached = self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((seen, tools)) = cached.as_ref()
            && Arc::ptr_eq(seen, &view)
        {
            return Arc::clone(tools);
        }
        let tools: Arc<Vec<Tool>> =
            Arc::new(view.tool_views().iter().filter_map(mcp_tool).collect());
        *cached = Some((view, Arc::clone(&tools)));
        tools
    }
}

/// An upstream's prompt or resource trouble, as the client's error.
fn passed_error(error: &purko_mcp::PassError) -> ErrorData {
    match error {
        purko_mcp::PassError::UnknownPrompt(_) | purko_mcp::PassError::NotSubscribable { .. } => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        purko_mcp::PassError::UnknownResource { .. } => {
            ErrorData::resource_not_found(error.to_string(), None)
        }
        purko_mcp::PassError::Upstream { .. } => ErrorData::internal_error(error.to_string(), None),
    }
}

fn internal(error: &purko_engine::Error) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}
