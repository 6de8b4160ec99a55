//! The commands that talk to a running `purko serve`: `call`, `explain`, `approvals`. The
//! server owns the store; the CLI never opens it behind the server's back.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use purko_config::env::Environment;
use serde_json::{Value, json};

use crate::judge::print;
use crate::{ApprovalsCommand, CallArgs, CheckFormat, ExplainArgs, Failure, Scope, ServerArgs};

/// Which token a command presents.
#[derive(Clone, Copy)]
enum As {
    Operator,
    Agent,
}

struct Client {
    base: String,
    token: String,
    http: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Client {
    fn new(server: &ServerArgs, who: As) -> Result<Self, Failure> {
        let env = Environment::from_process();
        let (from_env, file, variable) = match who {
            As::Operator => (
                env.operator_token.clone(),
                "operator.token",
                "PURKO_OPERATOR_TOKEN",
            ),
            As::Agent => (
                env.agent_token
                    .clone()
                    .or_else(|| env.operator_token.clone()),
                "agent.token",
                "PURKO_AGENT_TOKEN",
            ),
        };
        let token = match from_env {
            Some(t) => t,
            None => read_token(&env.home.join(file)).ok_or_else(|| {
                Failure::new(
                    format!(
                        "no token: {variable} is not set and {} cannot be read",
                        env.home.join(file).display()
                    ),
                    format!(
                        "set {variable} to the token `purko serve` printed at its first start, or run this where the server's state folder is (PURKO_HOME)"
                    ),
                    1,
                )
            })?,
        };
        purko_http::install_crypto();
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_mins(15))
            .build()
            .map_err(|e| {
                Failure::new(
                    format!("cannot make an HTTP client: {e}"),
                    "this is a bug; please report it",
                    1,
                )
            })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                Failure::new(
                    format!("cannot start the runtime: {e}"),
                    "check the machine's limits",
                    1,
                )
            })?;
        Ok(Self {
            base: server.server.trim_end_matches('/').to_owned(),
            token,
            http,
            runtime,
        })
    }

    /// Sends a request and returns the JSON answer, or a failure with the server's own error
    /// and hint.
    fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), Failure> {
        let url = format!("{}{path}", self.base);
        self.runtime.block_on(async {
            let mut request = self.http.request(method, &url).bearer_auth(&self.token);
            if let Some(body) = body {
                request = request.json(&body);
            }
            let response = request.send().await.map_err(|e| {
                Failure::new(
                    format!(
                        "cannot reach the Purko server at {}: {}",
                        self.base,
                        short(&e)
                    ),
                    "start it with `purko serve MANIFESTS...`, or pass --server http://host:port",
                    1,
                )
            })?;
            let status = response.status().as_u16();
            let text = response.text().await.unwrap_or_default();
            let value: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
            if status >= 400 && status != 409 {
                let message = value["error"]
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                let hint = value["hint"]
                    .as_str()
                    .unwrap_or("see the server's log")
                    .to_owned();
                return Err(Failure::new(
                    format!("the server answered {status}: {message}"),
                    hint,
                    1,
                ));
            }
            Ok((status, value))
        })
    }
}

fn short(e: &reqwest::Error) -> String {
    if e.is_connect() {
        "connection refused".into()
    } else if e.is_timeout() {
        "timed out".into()
    } else {
        e.to_string()
    }
}

fn read_token(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let token = text.trim();
    (!token.is_empty()).then(|| token.to_owned())
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

pub fn call(args: &CallArgs) -> Result<(), Failure> {
    let arguments: Value = serde_json::from_str(&args.arguments).map_err(|e| {
        Failure::new(
            format!("the arguments are not JSON: {e}"),
            r#"pass them as one JSON object, such as '{"id": "42"}'"#,
            2,
        )
    })?;
    let client = Client::new(&args.server, As::Agent)?;
    let mut body = json!({
        "agent": args.agent,
        "session": args.session,
        "step": args.step,
        "name": args.name,
        "arguments": arguments,
        "wait": !args.no_wait,
    });
    if let Some(key) = &args.idempotency_key {
        body["idempotency_key"] = json!(key);
    }
    let (_, observation) = client.send(reqwest::Method::POST, "/api/tools/call", Some(body))?;
    print(&pretty(&observation))
}

pub fn explain(args: &ExplainArgs) -> Result<(), Failure> {
    if let Err(e) = args.decision_id.parse::<purko_protocol::DecisionId>() {
        return Err(Failure::new(
            e.to_string(),
            "copy the decision_id from an observation or from `purko approvals show`",
            2,
        ));
    }
    let client = Client::new(&args.server, As::Operator)?;
    let (_, value) = client.send(
        reqwest::Method::GET,
        &format!("/api/decisions/{}", encode(&args.decision_id)),
        None,
    )?;
    match args.format {
        CheckFormat::Json => print(&pretty(&value)),
        CheckFormat::Text => print(value["explanation"].as_str().unwrap_or_default()),
    }
}

pub fn approvals(command: ApprovalsCommand) -> Result<(), Failure> {
    match command {
        ApprovalsCommand::List {
            server,
            status,
            agent,
            format,
        } => {
            let client = Client::new(&server, As::Operator)?;
            let mut query = vec![("limit".to_owned(), "200".to_owned())];
            if status != "all" {
                query.push(("status".into(), status));
            }
            if let Some(agent) = agent {
                query.push(("agent".into(), agent));
            }
            let query: Vec<String> = query
                .iter()
                .map(|(k, v)| format!("{k}={}", encode(v)))
                .collect();
            let (_, value) = client.send(
                reqwest::Method::GET,
                &format!("/api/approvals?{}", query.join("&")),
                None,
            )?;
            match format {
                CheckFormat::Json => print(&pretty(&value)),
                CheckFormat::Text => print(&approval_lines(&value["approvals"])),
            }
        }
        ApprovalsCommand::Show { server, id, format } => {
            let client = Client::new(&server, As::Operator)?;
            let (_, value) = client.send(
                reqwest::Method::GET,
                &format!("/api/approvals/{}", encode(&id)),
                None,
            )?;
            match format {
                CheckFormat::Json => print(&pretty(&value)),
                CheckFormat::Text => print(&approval_text(&value["approval"])),
            }
        }
        ApprovalsCommand::Approve {
            server,
            id,
            scope,
            comment,
        } => {
            let client = Client::new(&server, As::Operator)?;
            let scope = match scope {
                Scope::Once => "once",
                Scope::Session => "session",
            };
            let body = json!({"scope": scope, "comment": comment});
            answered(&client, &id, "approve", body)
        }
        ApprovalsCommand::Reject { server, id, reason } => {
            let client = Client::new(&server, As::Operator)?;
            answered(&client, &id, "reject", json!({"reason": reason}))
        }
    }
}

fn answered(client: &Client, id: &str, verb: &str, body: Value) -> Result<(), Failure> {
    let (status, value) = client.send(
        reqwest::Method::POST,
        &format!("/api/approvals/{}/{verb}", encode(id)),
        Some(body),
    )?;
    if status == 409 {
        return Err(Failure::new(
            value["error"]
                .as_str()
                .unwrap_or("the approval was already answered")
                .to_owned(),
            "nothing changed; `purko approvals show ID` tells how it was answered",
            1,
        ));
    }
    let a = &value["approval"];
    print(&format!(
        "{} {}: {} {} for agent {}\n",
        a["id"].as_str().unwrap_or(id),
        a["status"].as_str().unwrap_or("?"),
        a["tool"].as_str().unwrap_or("?"),
        serde_json::to_string(&a["arguments"]).unwrap_or_default(),
        a["agent"].as_str().unwrap_or("?"),
    ))
}

fn approval_lines(list: &Value) -> String {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    if items.is_empty() {
        return "no approvals\n".into();
    }
    let now = purko_engine::now_ms();
    let mut out = String::new();
    for a in items {
        let expires = a["expires_at_ms"].as_i64().unwrap_or(0);
        let when = if a["status"] == "pending" {
            format!("expires in {}s", ((expires - now) / 1000).max(0))
        } else {
            a["decided_by"]
                .as_str()
                .map(|b| format!("by {b}"))
                .unwrap_or_default()
        };
        let _ = writeln!(
            out,
            "{}  {:<8}  {}  {} ({}, {})  {}",
            a["id"].as_str().unwrap_or("?"),
            a["status"].as_str().unwrap_or("?"),
            a["agent"].as_str().unwrap_or("?"),
            a["tool"].as_str().unwrap_or("?"),
            a["kind"].as_str().unwrap_or("?"),
            a["kind_source"].as_str().unwrap_or("?"),
            when,
        );
    }
    out
}

fn approval_text(a: &Value) -> String {
    let mut out = format!(
        "approval {}: {}\n  agent       {} (session {}, step {})\n  tool        {}\n  kind        {} (source: {}) {}\n",
        a["id"].as_str().unwrap_or("?"),
        a["status"].as_str().unwrap_or("?"),
        a["agent"].as_str().unwrap_or("?"),
        a["session"].as_str().unwrap_or("?"),
        a["step"].as_str().unwrap_or("?"),
        a["tool"].as_str().unwrap_or("?"),
        a["kind"].as_str().unwrap_or("?"),
        a["kind_source"].as_str().unwrap_or("?"),
        a["kind_reason"].as_str().unwrap_or_default(),
    );
    for s in a["kind_signals"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let counted = if s["ignored"].is_null() { "+" } else { "-" };
        let _ = writeln!(
            out,
            "    {counted} {} → {}",
            s["text"].as_str().unwrap_or("?"),
            s["points_to"].as_str().unwrap_or("?")
        );
    }
    out.push_str("  why         ");
    let reasons: Vec<&str> = a["reasons"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    out.push_str(&reasons.join("\n              "));
    out.push('\n');
    out.push_str("  payload     ");
    let payload = serde_json::to_string_pretty(&a["arguments"]).unwrap_or_default();
    out.push_str(&payload.replace('\n', "\n              "));
    out.push('\n');
    let _ = writeln!(
        out,
        "  decision    {}",
        a["decision_id"].as_str().unwrap_or("?")
    );
    if let Some(c) = a["comment"].as_str() {
        let _ = writeln!(out, "  comment     {c}");
    }
    out
}

/// What `encode` leaves as it is: letters, digits, `-_.~` and `/` (an agent is `ns/name`).
const KEPT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'/');

/// Percent-encodes a path segment or query value.
fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, KEPT).to_string()
}
