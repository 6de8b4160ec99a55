//! `purko mcp`: the drafting server of seed 001 (DESIGN.md sections 3 and 9). It helps a person
//! write one agent's `tool_kinds.yaml` and never calls a model itself.
//!
//! - `writes_file` drafts the file for every tool the agent has (kind, source, reason, the
//!   uncertain ones first) and writes it where the agent's `guardrail.toolKinds` points, or to a
//!   `path` under the working folder. A person's entries (`source: you`) are kept exactly as
//!   written, an assistant's (`source: assistant`) stay in their own section, and the other
//!   entries of tools the agent has are drafted again from the tools' current definitions.
//! - `set_tool_kinds` records an assistant's proposals as `source: assistant`. A proposal never
//!   replaces a person's entry, and an unknown tool or kind refuses the whole call: nothing is
//!   written then.
//! - `explain_decision` gives the stored account of a decision.
//! - The prompt `classify-tools` hands the client's assistant the uncertain tools (name,
//!   description, input schema, the signals inference read) and asks it to propose kinds
//!   through `set_tool_kinds`.
//!
//! Every refusal is a `CallToolResult` with `isError: true`, a text that says what to do, and
//! `structuredContent` with `code`, `message` and `remediation`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use purko_config::{Agent, Manifests};
use purko_engine::Engine;
use purko_guard::{
    Catalogue, DestinationMap, Draft, Inference, KindEntry, KindsFile, claim, classify, describe,
};
use purko_protocol::{Classification, DecisionId, Kind, KindSource, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use crate::error::{Error, Result};

/// The prompt that asks the client's assistant to classify the uncertain tools.
pub const CLASSIFY_PROMPT: &str = "classify-tools";

const INSTRUCTIONS: &str = "Purko's drafting server for tool_kinds.yaml, the file that says \
what each of an agent's tools does: read, write or sends_out. `writes_file` drafts the file \
(uncertain tools first), `set_tool_kinds` records your proposals as source: assistant for the \
person to check, `explain_decision` explains a decision id, and the prompt `classify-tools` \
lists the tools nothing could classify. This server never calls a model.";

const KINDS_TEXT: &str = "\
- read: reads, changes nothing, sends nothing to anyone.
- write: changes something (a file, a record, a setting) and delivers nothing to an outside recipient.
- sends_out: delivers data to an address, a URL, a person or a channel.";

/// The longest input schema a prompt quotes, in bytes of JSON.
const SCHEMA_QUOTE_BYTES: usize = 4_000;

/// The drafting server for one agent.
pub struct Drafting {
    engine: Arc<Engine>,
    agent: String,
    /// `spec.guardrail.toolKinds`, resolved against the manifest's folder.
    kinds_path: Option<PathBuf>,
    /// Where the agent's manifest is, for messages.
    manifest: PathBuf,
    /// `spec.guardrail.infer`.
    inference: Inference,
    /// What a `path` argument is relative to.
    workdir: PathBuf,
    /// The file this server last wrote; the lock also makes each read-change-write of the
    /// file whole.
    written: Mutex<Option<PathBuf>>,
}

impl std::fmt::Debug for Drafting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drafting")
            .field("agent", &self.agent)
            .field("kinds_path", &self.kinds_path)
            .field("workdir", &self.workdir)
            .finish_non_exhaustive()
    }
}

/// A refusal of a tool call: what went wrong and what to do about it.
#[derive(Debug)]
struct Refusal {
    code: &'static str,
    message: String,
    remediation: String,
}

impl Refusal {
    fn new(code: &'static str, message: impl Into<String>, remediation: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            remediation: remediation.into(),
        }
    }

    fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
            "{}: {}\nremediation: {}",
            self.code, self.message, self.remediation
        ))]);
        result.structured_content = Some(json!({
            "code": self.code,
            "message": self.message,
            "remediation": self.remediation,
        }));
        result
    }
}

type Answer = std::result::Result<CallToolResult, Refusal>;

/// One tool as the current file and inference see it.
struct Seen<'a> {
    tool: &'a ToolSpec,
    /// `None` when the file has a person's or an assistant's entry for it.
    classified: Option<Classification>,
}

impl Seen<'_> {
    fn uncertain(&self) -> bool {
        self.classified.as_ref().is_some_and(|c| {
            c.source == KindSource::Unsure
                || (matches!(c.source, KindSource::Inferred | KindSource::Annotation)
                    && c.conflicted)
        })
    }
}

impl Drafting {
    /// A drafting server for `agent`, which the engine must know. `workdir` is what a `path`
    /// argument is relative to.
    pub fn new(engine: Arc<Engine>, agent: &Agent, workdir: impl Into<PathBuf>) -> Result<Self> {
        let key = agent.key();
        engine.agent(&key)?;
        Ok(Self {
            engine,
            agent: key,
            kinds_path: agent.tool_kinds_path(),
            manifest: agent.source.clone(),
            inference: if agent.infer() {
                Inference::On
            } else {
                Inference::Off
            },
            workdir: workdir.into(),
            written: Mutex::new(None),
        })
    }

    /// The manifests an engine for drafting can start from: a `toolKinds` file that does not
    /// exist yet is left out (drafting it is the point), every other setting is kept.
    pub fn engine_manifests(manifests: &Manifests) -> Manifests {
        let mut manifests = manifests.clone();
        for agent in &mut manifests.agents {
            let missing = agent.tool_kinds_path().is_some_and(|path| !path.exists());
            if missing && let Some(guardrail) = agent.spec.guardrail.as_mut() {
                guardrail.tool_kinds = None;
            }
        }
        manifests
    }

    /// The agent this server drafts for.
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

    /// The agent's tools now, registered MCP servers' included.
    fn catalogue(&self) -> std::result::Result<Catalogue, Refusal> {
        let agent = self.engine.agent(&self.agent).map_err(|e| {
            Refusal::new(
                "INTERNAL",
                e.to_string(),
                "restart purko mcp with the agent's manifests",
            )
        })?;
        Ok(agent.view().guard.catalogue().clone())
    }

    /// Where to read and write the kinds file: the `path` argument, the agent's
    /// `guardrail.toolKinds`, or the file this server last wrote.
    fn choose(
        &self,
        given: Option<&str>,
        written: Option<&PathBuf>,
    ) -> std::result::Result<PathBuf, Refusal> {
        if let Some(given) = given {
            return self.relative(given);
        }
        if let Some(path) = self.kinds_path.as_ref().or(written) {
            return Ok(path.clone());
        }
        Err(Refusal::new(
            "NO_KINDS_FILE",
            format!(
                "the agent '{}' has no spec.guardrail.toolKinds, so there is no file to write",
                self.agent
            ),
            format!(
                "pass a path relative to {} (for example {{\"path\": \"tool_kinds.yaml\"}}), or set spec.guardrail.toolKinds in {} and restart purko mcp",
                self.workdir.display(),
                self.manifest.display()
            ),
        ))
    }

    /// A `path` argument: relative, and inside the working folder.
    fn relative(&self, given: &str) -> std::result::Result<PathBuf, Refusal> {
        let path = Path::new(given);
        let inside = !given.trim().is_empty()
            && path
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
            && path.components().any(|c| matches!(c, Component::Normal(_)));
        if inside {
            Ok(self.workdir.join(path))
        } else {
            Err(Refusal::new(
                "INVALID_PATH",
                format!("'{given}' is not a file path inside the working folder"),
                format!(
                    "give path relative to {}, without '..', for example \"tool_kinds.yaml\"",
                    self.workdir.display()
                ),
            ))
        }
    }

    /// The kinds file at `path`; `None` when there is none yet.
    fn load(path: &Path) -> std::result::Result<Option<KindsFile>, Refusal> {
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            _ => KindsFile::load(path).map(Some).map_err(|e| {
                Refusal::new(
                    "KINDS_FILE_INVALID",
                    e.to_string(),
                    format!("{}; nothing was written", e.hint()),
                )
            }),
        }
    }

    /// The file's settled entries: the ones a person or an assistant wrote.
    fn settled(file: Option<&KindsFile>, inference: Inference) -> KindsFile {
        let mut settled = KindsFile::new(file.map_or(inference.is_on(), |f| f.infer));
        if let Some(file) = file {
            for (name, entry) in &file.tools {
                if matches!(entry.source, KindSource::You | KindSource::Assistant) {
                    settled.tools.insert(name.clone(), entry.clone());
                }
            }
        }
        settled
    }

    /// Each tool, classified against the settled entries.
    fn see<'a>(&self, catalogue: &'a Catalogue, settled: &KindsFile) -> Vec<Seen<'a>> {
        let inference = Inference::effective(Some(settled), self.inference);
        catalogue
            .tools()
            .iter()
            .map(|tool| Seen {
                tool,
                classified: (!settled.tools.contains_key(&tool.name)).then(|| {
                    let destinations = DestinationMap::from_schema(tool.input_schema.as_ref());
                    classify(tool, Some(settled), inference, &destinations)
                }),
            })
            .collect()
    }

    async fn writes_file(&self, arguments: &JsonObject) -> Answer {
        only_keys(arguments, &["path"])?;
        let given = optional_string(arguments, "path")?;
        let catalogue = self.catalogue()?;
        let mut written = self.written.lock().await;
        let path = self.choose(given, written.as_ref())?;
        let old = Self::load(&path)?;
        let settled = Self::settled(old.as_ref(), self.inference);
        let seen = self.see(&catalogue, &settled);

        let mut draft = Draft::new(Some(settled), self.inference);
        let mut changed = Vec::new();
        for s in &seen {
            if let Some(c) = &s.classified {
                draft.add_classified(&s.tool.name, c);
                if let Some(before) = old.as_ref().and_then(|f| f.tools.get(&s.tool.name))
                    && before.kind != c.kind
                {
                    changed.push(json!({
                        "name": s.tool.name, "was": before.kind, "now": c.kind, "source": c.source,
                    }));
                }
            }
        }
        let mut file = draft.finish();
        // Entries of tools the agent does not have now (a server that is down, a tool renamed)
        // are kept as they were: drafting never loses what someone wrote.
        let mut unseen = Vec::new();
        for (name, entry) in old.iter().flat_map(|f| &f.tools) {
            if catalogue.get(name).is_none() {
                if !file.tools.contains_key(name) {
                    file.tools.insert(name.clone(), entry.clone());
                }
                unseen.push(name.clone());
            }
        }
        file.sort_for_review();
        write_atomically(&path, &file.to_yaml())?;
        *written = Some(path.clone());
        drop(written);

        let summary = Summary::of(&file);
        let uncertain: Vec<Value> = seen
            .iter()
            .filter(|s| s.uncertain())
            .filter_map(|s| {
                let c = s.classified.as_ref()?;
                Some(json!({"name": s.tool.name, "kind": c.kind, "source": c.source, "reason": c.reason}))
            })
            .collect();
        let by_source = |source: KindSource| -> Vec<&str> {
            file.tools
                .iter()
                .filter(|(name, e)| e.source == source && catalogue.get(name).is_some())
                .map(|(name, _)| name.as_str())
                .collect()
        };
        let yours = by_source(KindSource::You);
        let proposed = by_source(KindSource::Assistant);

        let mut text = format!(
            "Wrote {} with {} tools: {}.\nBy source: {}.\n",
            path.display(),
            file.tools.len(),
            counts_text(&summary.by_kind),
            counts_text(&summary.by_source)
        );
        if uncertain.is_empty() {
            text.push_str("No tool is uncertain.\n");
        } else {
            let _ = writeln!(
                text,
                "Uncertain ({}), first in the file; check them, or use the prompt {CLASSIFY_PROMPT}:",
                uncertain.len()
            );
            for u in &uncertain {
                let _ = writeln!(
                    text,
                    "  - {} ({}, {}): {}",
                    u["name"].as_str().unwrap_or_default(),
                    u["kind"].as_str().unwrap_or_default(),
                    u["source"].as_str().unwrap_or_default(),
                    u["reason"].as_str().unwrap_or_default()
                );
            }
        }
        if !yours.is_empty() {
            let _ = writeln!(
                text,
                "Kept as you wrote them (source: you): {}.",
                yours.join(", ")
            );
        }
        if !proposed.is_empty() {
            let _ = writeln!(
                text,
                "Kept in the assistant's section for you to check (source: assistant): {}.",
                proposed.join(", ")
            );
        }
        for c in &changed {
            let _ = writeln!(
                text,
                "Drafted again: {} was {} in the file, now {} ({}).",
                c["name"].as_str().unwrap_or_default(),
                c["was"].as_str().unwrap_or_default(),
                c["now"].as_str().unwrap_or_default(),
                c["source"].as_str().unwrap_or_default()
            );
        }
        if !unseen.is_empty() {
            let _ = writeln!(
                text,
                "Kept the entries of tools the agent does not have now: {}.",
                unseen.join(", ")
            );
        }
        let note = self.note(&path);
        text.push_str(&note);
        text.push('\n');
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({
            "path": path.display().to_string(),
            "tools": file.tools.len(),
            "by_kind": summary.by_kind,
            "by_source": summary.by_source,
            "uncertain": uncertain,
            "kept_from_you": yours,
            "assistant": proposed,
            "changed": changed,
            "kept_unseen": unseen,
            "note": note,
        }));
        Ok(result)
    }

    /// What the person must do for the file to take effect.
    fn note(&self, path: &Path) -> String {
        if self.kinds_path.as_deref() == Some(path) {
            "Purko reads this file when `purko serve` or `purko gateway` starts: restart them to use it.".to_owned()
        } else {
            format!(
                "The agent does not read this file yet: set spec.guardrail.toolKinds in {} to it, then restart `purko serve` or `purko gateway`.",
                self.manifest.display()
            )
        }
    }

    async fn set_tool_kinds(&self, arguments: &JsonObject) -> Answer {
        only_keys(arguments, &["tools", "path"])?;
        let given = optional_string(arguments, "path")?;
        let proposals = proposals(arguments)?;
        let catalogue = self.catalogue()?;
        check_proposals(&proposals, &catalogue)?;

        let mut written = self.written.lock().await;
        let path = self.choose(given, written.as_ref())?;
        let mut file = Self::load(&path)?.unwrap_or_else(|| KindsFile::new(self.inference.is_on()));
        let mut recorded = Vec::new();
        let mut refused = Vec::new();
        for (name, proposal) in &proposals {
            let kind = proposal.kind.parse::<Kind>().unwrap_or(Kind::Write);
            match file.tools.get(name) {
                Some(entry) if entry.source == KindSource::You => {
                    refused.push(json!({
                        "name": name, "kind": entry.kind, "proposed": kind, "reason": entry.reason,
                    }));
                }
                _ => {
                    file.tools.insert(
                        name.clone(),
                        KindEntry {
                            kind,
                            source: KindSource::Assistant,
                            reason: proposal.reason.clone(),
                        },
                    );
                    recorded.push(json!({"name": name, "kind": kind, "reason": proposal.reason}));
                }
            }
        }
        if !recorded.is_empty() {
            file.sort_for_review();
            write_atomically(&path, &file.to_yaml())?;
            *written = Some(path.clone());
        }
        drop(written);

        let mut text = if recorded.is_empty() {
            format!("Nothing recorded in {}.\n", path.display())
        } else {
            let mut text = format!(
                "Recorded {} proposal(s) in {} as source: assistant, in their own section for the person to check:\n",
                recorded.len(),
                path.display()
            );
            for r in &recorded {
                let _ = writeln!(
                    text,
                    "  - {}: {} ({})",
                    r["name"].as_str().unwrap_or_default(),
                    r["kind"].as_str().unwrap_or_default(),
                    r["reason"].as_str().unwrap_or_default()
                );
            }
            text
        };
        for r in &refused {
            let _ = writeln!(
                text,
                "Not recorded: {} is {} in the file, written by a person (source: you); an assistant's proposal never replaces a person's entry (proposed: {}).",
                r["name"].as_str().unwrap_or_default(),
                r["kind"].as_str().unwrap_or_default(),
                r["proposed"].as_str().unwrap_or_default()
            );
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({
            "path": path.display().to_string(),
            "recorded": recorded,
            "kept_from_you": refused,
        }));
        Ok(result)
    }

    async fn explain_decision(&self, arguments: &JsonObject) -> Answer {
        only_keys(arguments, &["decision_id"])?;
        let Some(given) = optional_string(arguments, "decision_id")? else {
            return Err(Refusal::new(
                "INVALID_ARGUMENTS",
                "decision_id is missing",
                "pass {\"decision_id\": \"d_...\"}, the id an observation carries",
            ));
        };
        let id: DecisionId = given.trim().parse().map_err(|_| {
            Refusal::new(
                "NOT_A_DECISION_ID",
                format!("'{given}' is not a decision id"),
                "decision ids look like d_<kinds>_<i|n>_<policy>_<ulid>: copy the decision_id of an observation",
            )
        })?;
        let found = self.engine.explain(&id).await.map_err(|e| {
            Refusal::new("INTERNAL", format!("cannot read the store: {e}"), e.hint())
        })?;
        let Some((record, text)) = found else {
            return Err(Refusal::new(
                "NO_SUCH_DECISION",
                format!("no decision with id '{id}' is in the store"),
                "check the id, and that purko mcp uses the same PURKO_HOME as the server that judged the call",
            ));
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
        result.structured_content = Some(json!({
            "decision_id": id.to_string(),
            "explanation": text,
            "record": serde_json::to_value(&record).unwrap_or(Value::Null),
        }));
        Ok(result)
    }

    /// The text of the prompt `classify-tools`.
    async fn classify_prompt(&self) -> std::result::Result<String, Refusal> {
        let catalogue = self.catalogue()?;
        let written = self.written.lock().await.clone();
        let current = match self.choose(None, written.as_ref()) {
            Ok(path) => Self::load(&path)?,
            Err(_) => None,
        };
        let settled = Self::settled(current.as_ref(), self.inference);
        let seen = self.see(&catalogue, &settled);
        let uncertain: Vec<&Seen<'_>> = seen.iter().filter(|s| s.uncertain()).collect();
        let mut text = format!(
            "You are helping a person classify the tools of the agent `{}` for Purko, a guarded tool layer. Every tool is one of three kinds:\n{KINDS_TEXT}\n\n\
The kind decides what a call needs: a read with valid arguments runs; a write waits for a person's yes unless a rule allows it; a destination in a call to a tool that does not send out is refused. A wrong read would let a write run without anyone's yes, and a wrong write only asks once more: when in doubt, choose write, or sends_out when the tool may deliver anything to anyone.\n\n",
            self.agent
        );
        if uncertain.is_empty() {
            text.push_str(
                "Nothing is uncertain now: every tool's kind is settled by the person's file, an assistant's earlier proposal, the catalogue or agreeing signals. There is nothing to propose.\n",
            );
            return Ok(text);
        }
        let _ = writeln!(
            text,
            "Purko could not tell what these {} tool(s) do:\n",
            uncertain.len()
        );
        for s in &uncertain {
            let Some(c) = &s.classified else { continue };
            let _ = writeln!(text, "## {}", s.tool.name);
            let description = if s.tool.description.trim().is_empty() {
                "(none)"
            } else {
                s.tool.description.trim()
            };
            let _ = writeln!(text, "description: {description}");
            let schema = s
                .tool
                .input_schema
                .as_ref()
                .map_or_else(|| "(none)".to_owned(), quote_schema);
            let _ = writeln!(text, "input schema: {schema}");
            let _ = writeln!(
                text,
                "Purko's guess: {} (source: {}): {}",
                c.kind, c.source, c.reason
            );
            if !c.signals.is_empty() {
                text.push_str("signals seen:\n");
                for signal in &c.signals {
                    match &signal.ignored {
                        None => {
                            let _ = writeln!(text, "  + {}", claim(signal));
                        }
                        Some(why) => {
                            let _ =
                                writeln!(text, "  - {} does not count: {why}", describe(signal));
                        }
                    }
                }
            }
            text.push('\n');
        }
        text.push_str(
            "Propose a kind for each tool you can tell by calling the tool `set_tool_kinds` once, with\n\
{\"tools\": {\"<tool name>\": {\"kind\": \"read\" | \"write\" | \"sends_out\", \"reason\": \"<one line a person can check>\"}}}\n\
Your proposals are recorded as source: assistant, in their own section of tool_kinds.yaml, for the person to check; they never replace an entry the person wrote. Leave out any tool you cannot tell: it stays a write, which costs a confirmation and never a silent run.\n",
        );
        Ok(text)
    }
}

/// Counts of a written file, in a stable order.
struct Summary {
    by_kind: BTreeMap<&'static str, usize>,
    by_source: BTreeMap<&'static str, usize>,
}

impl Summary {
    fn of(file: &KindsFile) -> Self {
        let mut by_kind = BTreeMap::new();
        let mut by_source = BTreeMap::new();
        for entry in file.tools.values() {
            *by_kind.entry(entry.kind.as_str()).or_insert(0) += 1;
            *by_source.entry(entry.source.as_str()).or_insert(0) += 1;
        }
        Self { by_kind, by_source }
    }
}

fn counts_text(counts: &BTreeMap<&'static str, usize>) -> String {
    if counts.is_empty() {
        return "none".to_owned();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn quote_schema(schema: &Value) -> String {
    let text = schema.to_string();
    if text.len() > SCHEMA_QUOTE_BYTES {
        format!(
            "{}… (cut at {SCHEMA_QUOTE_BYTES} bytes)",
            &text[..text.floor_char_boundary(SCHEMA_QUOTE_BYTES)]
        )
    } else {
        text
    }
}

/// Writes the whole text or nothing: a temporary file next to `path`, then a rename.
fn write_atomically(path: &Path, text: &str) -> std::result::Result<(), Refusal> {
    let fail = |e: &std::io::Error| {
        Refusal::new(
            "WRITE_FAILED",
            format!("cannot write {}: {e}", path.display()),
            "check that the folder exists and is writable; nothing was changed",
        )
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| fail(&e))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", ulid::Ulid::generate()));
    std::fs::write(&temporary, text).map_err(|e| fail(&e))?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        fail(&e)
    })
}

/// Refuses keys a tool does not take, naming them.
fn only_keys(arguments: &JsonObject, known: &[&str]) -> std::result::Result<(), Refusal> {
    let unknown: Vec<&str> = arguments
        .keys()
        .map(String::as_str)
        .filter(|k| !known.contains(k))
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(Refusal::new(
            "INVALID_ARGUMENTS",
            format!("unknown argument(s): {}", unknown.join(", ")),
            format!("this tool takes: {}", known.join(", ")),
        ))
    }
}

fn optional_string<'a>(
    arguments: &'a JsonObject,
    key: &str,
) -> std::result::Result<Option<&'a str>, Refusal> {
    match arguments.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(Refusal::new(
            "INVALID_ARGUMENTS",
            format!("{key} must be a string, not {other}"),
            format!("pass {key} as a JSON string"),
        )),
    }
}

/// One proposal of `set_tool_kinds`, not yet checked against the catalogue.
struct Proposal {
    kind: String,
    reason: String,
}

const PROPOSAL_SHAPE: &str = "pass {\"tools\": {\"<tool name>\": {\"kind\": \"read\" | \"write\" | \"sends_out\", \"reason\": \"why\"}}}";

/// The `tools` argument, in the order given; its shape only.
fn proposals(arguments: &JsonObject) -> std::result::Result<IndexMap<String, Proposal>, Refusal> {
    let shape = |message: String| Refusal::new("INVALID_ARGUMENTS", message, PROPOSAL_SHAPE);
    let tools = match arguments.get("tools") {
        Some(Value::Object(tools)) if !tools.is_empty() => tools,
        Some(Value::Object(_)) => return Err(shape("tools is empty".into())),
        Some(other) => return Err(shape(format!("tools must be an object, not {other}"))),
        None => return Err(shape("tools is missing".into())),
    };
    let mut problems = Vec::new();
    let mut out = IndexMap::new();
    for (name, value) in tools {
        let Value::Object(entry) = value else {
            problems.push(format!(
                "{name}: must be an object with kind and reason, not {value}"
            ));
            continue;
        };
        let extra: Vec<&str> = entry
            .keys()
            .map(String::as_str)
            .filter(|k| !matches!(*k, "kind" | "reason"))
            .collect();
        if !extra.is_empty() {
            problems.push(format!(
                "{name}: unknown key(s) {} (a proposal takes kind and reason; its source is always assistant)",
                extra.join(", ")
            ));
        }
        let kind = match entry.get("kind") {
            Some(Value::String(kind)) => kind.clone(),
            Some(other) => {
                problems.push(format!("{name}: kind must be a string, not {other}"));
                continue;
            }
            None => {
                problems.push(format!("{name}: kind is missing"));
                continue;
            }
        };
        let reason = match entry.get("reason") {
            Some(Value::String(reason)) if !reason.trim().is_empty() => reason.trim().to_owned(),
            Some(Value::String(_)) | None => {
                problems.push(format!(
                    "{name}: reason is missing; give one line a person can check"
                ));
                continue;
            }
            Some(other) => {
                problems.push(format!("{name}: reason must be a string, not {other}"));
                continue;
            }
        };
        out.insert(name.clone(), Proposal { kind, reason });
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(Refusal::new(
            "INVALID_ARGUMENTS",
            format!("nothing was written: {}", problems.join("; ")),
            PROPOSAL_SHAPE,
        ))
    }
}

/// Refuses unknown tools and unknown kinds, naming every one.
fn check_proposals(
    proposals: &IndexMap<String, Proposal>,
    catalogue: &Catalogue,
) -> std::result::Result<(), Refusal> {
    let mut unknown_tools = Vec::new();
    let mut unknown_kinds = Vec::new();
    for (name, proposal) in proposals {
        if catalogue.get(name).is_none() {
            let similar = catalogue.similar(name);
            unknown_tools.push(if similar.is_empty() {
                format!("'{name}'")
            } else {
                format!("'{name}' (did you mean {}?)", similar.join(", "))
            });
        }
        if proposal.kind.parse::<Kind>().is_err() {
            unknown_kinds.push(format!("'{}' for '{name}'", proposal.kind));
        }
    }
    let mut problems = Vec::new();
    if !unknown_tools.is_empty() {
        problems.push(format!("unknown tool(s): {}", unknown_tools.join(", ")));
    }
    if !unknown_kinds.is_empty() {
        problems.push(format!("unknown kind(s): {}", unknown_kinds.join(", ")));
    }
    if problems.is_empty() {
        return Ok(());
    }
    let mut remediation = Vec::new();
    if !unknown_tools.is_empty() {
        remediation.push(
            "name tools exactly as the agent has them (see the prompt classify-tools or writes_file)"
                .to_owned(),
        );
    }
    if !unknown_kinds.is_empty() {
        remediation.push("a kind is one of read, write, sends_out".to_owned());
    }
    Err(Refusal::new(
        "INVALID_PROPOSAL",
        format!("nothing was written: {}", problems.join("; ")),
        remediation.join("; "),
    ))
}

fn schema(value: &Value) -> Arc<JsonObject> {
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

fn tools() -> Vec<Tool> {
    let path = json!({
        "type": "string",
        "description": "A file path relative to the working folder of purko mcp; by default the agent's spec.guardrail.toolKinds."
    });
    vec![
        Tool::new(
            "writes_file",
            "Drafts tool_kinds.yaml for every tool of the agent (kind, source, reason; uncertain tools first) and writes it where the agent's spec.guardrail.toolKinds points, or to `path`. Entries a person wrote (source: you) are kept exactly; an assistant's proposals stay in their own section. Answers the path, the counts by kind and source, and the uncertain tools.",
            schema(&json!({
                "type": "object",
                "properties": {"path": path},
                "additionalProperties": false
            })),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new(
            "set_tool_kinds",
            "Records your proposed kinds as source: assistant in the agent's tool_kinds.yaml, in their own section for the person to check. A kind is read (reads, changes nothing, sends nothing), write (changes something, delivers nothing to an outside recipient) or sends_out (delivers data to an address, a URL, a person or a channel). Unknown tools or kinds refuse the whole call; an entry the person wrote (source: you) is never replaced.",
            schema(&json!({
                "type": "object",
                "properties": {
                    "tools": {
                        "type": "object",
                        "description": "Tool name → proposal.",
                        "additionalProperties": {
                            "type": "object",
                            "properties": {
                                "kind": {"type": "string", "enum": ["read", "write", "sends_out"]},
                                "reason": {"type": "string", "description": "One line a person can check."}
                            },
                            "required": ["kind", "reason"],
                            "additionalProperties": false
                        }
                    },
                    "path": path
                },
                "required": ["tools"],
                "additionalProperties": false
            })),
        )
        .with_annotations(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new(
            "explain_decision",
            "Explains a decision by its id (d_<kinds>_<i|n>_<policy>_<ulid>, as observations carry it): the call, where the tool's kind came from, the autonomy cell, the rules, the destinations and the outcome.",
            schema(&json!({
                "type": "object",
                "properties": {"decision_id": {"type": "string"}},
                "required": ["decision_id"],
                "additionalProperties": false
            })),
        )
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
    ]
}

impl ServerHandler for Drafting {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("purko-mcp", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let answer = match request.name.as_ref() {
            "writes_file" => self.writes_file(&arguments).await,
            "set_tool_kinds" => self.set_tool_kinds(&arguments).await,
            "explain_decision" => self.explain_decision(&arguments).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "no tool is named '{other}'; purko mcp has writes_file, set_tool_kinds and explain_decision"
                    ),
                    None,
                ));
            }
        };
        Ok(answer.unwrap_or_else(Refusal::into_result).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            CLASSIFY_PROMPT,
            Some(
                "Hands you the agent's tools Purko could not classify (names, descriptions, input schemas, the signals seen) and asks you to propose their kinds through set_tool_kinds.",
            ),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != CLASSIFY_PROMPT {
            return Err(ErrorData::invalid_params(
                format!(
                    "no prompt is named '{}'; purko mcp has {CLASSIFY_PROMPT}",
                    request.name
                ),
                None,
            ));
        }
        let text = self.classify_prompt().await.map_err(|r| {
            ErrorData::internal_error(format!("{}: {}", r.message, r.remediation), None)
        })?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(format!(
                    "Classify the uncertain tools of the agent {}",
                    self.agent
                ))
                .into(),
        )
    }
}
