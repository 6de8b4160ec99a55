//! The MCP gateway end to end: the official Python MCP SDK as the client of `purko gateway
//! --stdio` and of `purko serve`'s `/mcp/<namespace>/<name>`, in front of the npm filesystem
//! reference server. A write waiting in the gateway is released by `purko serve` sharing its
//! store: two processes, one `SQLite` file.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::{manifests, peers};
use crate::support::{AGENT, OPERATOR, Scratch, Server, stderr};

const PATIENCE: Duration = Duration::from_mins(1);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The virtualenv `.ci/run` makes with the official SDK in it.
fn python() -> PathBuf {
    let python = root().join("target/py-mcp/bin/python");
    assert!(
        python.exists(),
        "the Python MCP SDK is missing: run .ci/run, or: python3 -m venv target/py-mcp && target/py-mcp/bin/pip install mcp==2.3.0"
    );
    python
}

/// A Python SDK client running `ops`, its events as they come.
struct PyClient {
    child: Child,
    events: Receiver<Value>,
}

impl PyClient {
    fn start(transport: &[&str], ops: &Value, home: &Path, extra_env: &[(&str, &str)]) -> Self {
        let script = root().join("crates/purko-gateway/tests/python/client.py");
        let mut command = Command::new(python());
        command
            .arg(script)
            .arg(transport[0])
            .arg(ops.to_string())
            .args(&transport[1..])
            .env("PURKO_HOME", home)
            .env("PURKO_LOG", "warn")
            .env("PURKO_OPERATOR_TOKEN", OPERATOR)
            .env("PURKO_AGENT_TOKEN", AGENT)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in extra_env {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, events) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let event = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if send.send(event).is_err() {
                    break;
                }
            }
        });
        Self { child, events }
    }

    /// The next event, which must be `kind`.
    fn next(&mut self, kind: &str) -> Value {
        let event = self.events.recv_timeout(PATIENCE).unwrap_or_else(|_| {
            let status = self.child.try_wait().unwrap();
            panic!("the Python client said nothing more (exit: {status:?}) while {kind} was due")
        });
        assert_eq!(event["event"], kind, "{event}");
        event
    }

    fn finish(mut self) {
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the Python client failed: {status}");
    }
}

impl Drop for PyClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio<'a>(manifest: &'a str, agent: &'a str) -> [&'a str; 4] {
    ["stdio", env!("CARGO_BIN_EXE_purko"), agent, manifest]
}

fn tool<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
}

fn text(result: &Value) -> &str {
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// Waits for the one pending approval and approves it with the CLI of `purko serve`.
fn approve_pending(server: &Server) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (status, list) =
            server.api("GET", "/api/approvals?status=pending", Some(OPERATOR), None);
        assert_eq!(status, 200, "{list}");
        if let Some(id) = list["approvals"][0]["id"].as_str() {
            let approve = server.purko(&["approvals", "approve", id]);
            assert!(approve.status.success(), "{}", stderr(&approve));
            return id.to_owned();
        }
        assert!(Instant::now() < deadline, "no approval came");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn files(scratch: &Scratch) -> PathBuf {
    let files = scratch.dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("hello.txt"), "hello from the disk").unwrap();
    files.canonicalize().unwrap()
}

#[test]
fn the_python_sdk_over_stdio_reads_and_a_restricted_agent_neither_sees_nor_runs_writes() {
    let _ = peers();
    let scratch = Scratch::new("gateway-stdio");
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    let ops = json!([
        {"op": "list"},
        {"op": "call", "name": "read_text_file", "arguments": {"path": files.join("hello.txt")}},
        {"op": "call", "name": "write_file", "arguments": {"path": files.join("new.txt"), "content": "no"}},
    ]);
    let mut client = PyClient::start(
        &stdio(manifest.to_str().unwrap(), "test/reader"),
        &ops,
        &scratch.home(),
        &[],
    );
    let connected = client.next("connected");
    assert_eq!(connected["server"]["name"], "purko", "{connected}");
    assert!(
        connected["instructions"]
            .as_str()
            .unwrap()
            .contains("guarded")
    );

    let list = client.next("list");
    let read = tool(&list, "read_text_file").expect("read_text_file is listed");
    assert_eq!(read["annotations"]["readOnlyHint"], true, "{read}");
    assert!(tool(&list, "write_file").is_none(), "{list}");
    assert!(tool(&list, "move_file").is_none(), "{list}");

    client.next("calling");
    let read = client.next("result");
    assert_eq!(read["result"]["isError"], false, "{read}");
    assert!(text(&read).contains("hello from the disk"), "{read}");
    assert_eq!(read["result"]["structuredContent"]["status"], "success");

    client.next("calling");
    let write = client.next("result");
    assert_eq!(write["result"]["isError"], true, "{write}");
    assert!(text(&write).starts_with("AUTONOMY_BLOCKED"), "{write}");
    assert_eq!(
        write["result"]["structuredContent"]["code"],
        "AUTONOMY_BLOCKED"
    );
    client.finish();
    assert!(!files.join("new.txt").exists());
}

#[test]
fn over_stdio_a_write_waits_until_purko_serve_on_the_same_store_approves_it() {
    let _ = peers();
    let scratch = Scratch::new("gateway-approve");
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    let server = Server::start(&manifest, &scratch.home());
    let target = files.join("written.txt");
    let ops = json!([
        {"op": "list"},
        {"op": "call", "name": "write_file", "arguments": {"path": target, "content": "approved once"}},
    ]);
    let mut client = PyClient::start(
        &stdio(manifest.to_str().unwrap(), "test/desk"),
        &ops,
        &scratch.home(),
        &[],
    );
    client.next("connected");
    let list = client.next("list");
    let write = tool(&list, "write_file").expect("write_file is listed at supervised");
    assert_eq!(write["annotations"]["readOnlyHint"], false, "{write}");
    assert_eq!(write["annotations"]["destructiveHint"], true, "{write}");
    client.next("calling");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !target.exists(),
        "nothing is written before a person says yes"
    );
    approve_pending(&server);
    let done = client.next("result");
    assert_eq!(done["result"]["isError"], false, "{done}");
    client.finish();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "approved once");
}

#[test]
fn over_streamable_http_the_agent_token_reads_and_a_write_waits_for_an_approval() {
    let _ = peers();
    let scratch = Scratch::new("gateway-http");
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    let server = Server::start(&manifest, &scratch.home());

    let (status, _) = server.api("POST", "/mcp/test/desk", None, Some("{}"));
    assert_eq!(status, 401, "no token, no MCP");
    let (status, _) = server.api("POST", "/mcp/test/desk", Some("guess"), Some("{}"));
    assert_eq!(status, 401, "a wrong token, no MCP");

    let target = files.join("over-http.txt");
    let ops = json!([
        {"op": "list"},
        {"op": "call", "name": "read_text_file", "arguments": {"path": files.join("hello.txt")}},
        {"op": "call", "name": "write_file", "arguments": {"path": target, "content": "via http"}},
    ]);
    let url = format!("{}/mcp/test/desk", server.url());
    let mut client = PyClient::start(&["http", &url, AGENT], &ops, &scratch.home(), &[]);
    assert_eq!(client.next("connected")["server"]["name"], "purko");
    let list = client.next("list");
    assert_eq!(
        tool(&list, "read_text_file").unwrap()["annotations"]["readOnlyHint"],
        true,
        "{list}"
    );
    client.next("calling");
    let read = client.next("result");
    assert!(text(&read).contains("hello from the disk"), "{read}");
    client.next("calling");
    approve_pending(&server);
    let done = client.next("result");
    assert_eq!(done["result"]["isError"], false, "{done}");
    client.finish();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "via http");
}

/// Adds an agent whose approvals never go through the client (`elicitation: false`).
fn with_robot(manifest: &Path) {
    let mut text = std::fs::read_to_string(manifest).unwrap();
    text.push_str(
        "---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {name: robot, namespace: test}
spec:
  autonomyLevel: supervised
  guardrail:
    approvals: {elicitation: false}
",
    );
    std::fs::write(manifest, text).unwrap();
}

/// A write over stdio whose approval the client's person answers through elicitation, on the
/// given protocol mode (`legacy`: 2025-11-25 and `elicitation/create`; `auto`: 2026-07-28 and
/// an `InputRequired` result). The same call sent again (same step) is answered from the store.
fn elicited_write(mode: &str, answer: &str) {
    let _ = peers();
    let scratch = Scratch::new(&format!("gateway-elicit-{mode}-{answer}"));
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    let target = files.join("elicited.txt");
    let write = json!({"op": "call", "name": "write_file", "meta": {"purko.io/step": "w1"},
        "arguments": {"path": target, "content": "asked in the client"}});
    let ops = json!([write, write]);
    let mut client = PyClient::start(
        &stdio(manifest.to_str().unwrap(), "test/desk"),
        &ops,
        &scratch.home(),
        &[("PURKO_MCP_MODE", mode), ("PURKO_ELICIT", answer)],
    );
    let connected = client.next("connected");
    let protocol = if mode == "legacy" {
        "2025-11-25"
    } else {
        "2026-07-28"
    };
    assert_eq!(connected["protocol"], protocol, "{connected}");
    client.next("calling");
    let asked = client.next("elicitation");
    let message = asked["params"]["message"].as_str().unwrap();
    assert!(message.contains("write_file"), "{asked}");
    assert!(message.contains("asked in the client"), "{asked}");
    assert!(message.contains("write tool"), "{asked}");
    assert_eq!(
        asked["params"]["requestedSchema"]["properties"]["approve"]["type"], "boolean",
        "{asked}"
    );
    let first = client.next("result");
    client.next("calling");
    let again = client.next("result");
    client.finish();
    if answer == "accept" {
        assert_eq!(first["result"]["isError"], false, "{first}");
        assert_eq!(again["result"]["isError"], false, "{again}");
        assert_eq!(
            again["result"]["structuredContent"]["replayed"], true,
            "{again}"
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "asked in the client"
        );
    } else {
        for result in [&first, &again] {
            assert_eq!(result["result"]["isError"], true, "{result}");
            assert_eq!(
                result["result"]["structuredContent"]["code"], "APPROVAL_REJECTED",
                "{result}"
            );
            assert!(text(result).contains("declined in the client"), "{result}");
        }
        assert!(!target.exists(), "a declined write never runs");
    }
    // Both answers are on the record, by the client's person.
    let server = Server::start(&manifest, &scratch.home());
    let (status, list) = server.api("GET", "/api/approvals", Some(OPERATOR), None);
    assert_eq!(status, 200, "{list}");
    let approvals = list["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 1, "one approval for the one call: {list}");
    assert_eq!(approvals[0]["decided_by"], "elicitation", "{list}");
}

#[test]
fn legacy_protocol_an_accepted_elicitation_writes_the_file_once() {
    elicited_write("legacy", "accept");
}

#[test]
fn legacy_protocol_a_declined_elicitation_rejects_and_nothing_is_written() {
    elicited_write("legacy", "decline");
}

#[test]
fn protocol_2026_an_accepted_input_request_writes_the_file_once() {
    elicited_write("auto", "accept");
}

#[test]
fn protocol_2026_a_declined_input_request_rejects_and_nothing_is_written() {
    elicited_write("auto", "decline");
}

/// `elicitation: false`: the client is never asked, the call waits for the CLI.
fn never_elicited(mode: &str) {
    let _ = peers();
    let scratch = Scratch::new(&format!("gateway-no-elicit-{mode}"));
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    with_robot(&manifest);
    let server = Server::start(&manifest, &scratch.home());
    let target = files.join("robot.txt");
    let ops = json!([
        {"op": "call", "name": "write_file", "arguments": {"path": target, "content": "by the cli"}},
    ]);
    let mut client = PyClient::start(
        &stdio(manifest.to_str().unwrap(), "test/robot"),
        &ops,
        &scratch.home(),
        &[("PURKO_MCP_MODE", mode), ("PURKO_ELICIT", "accept")],
    );
    client.next("connected");
    client.next("calling");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !target.exists(),
        "nothing is written before a person says yes"
    );
    let id = approve_pending(&server);
    // `next` insists on a result: an elicitation event here fails the test.
    let done = client.next("result");
    assert_eq!(done["result"]["isError"], false, "{done}");
    client.finish();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "by the cli");
    let (_, approval) = server.api("GET", &format!("/api/approvals/{id}"), Some(OPERATOR), None);
    assert_eq!(approval["approval"]["status"], "approved", "{approval}");
    assert_ne!(
        approval["approval"]["decided_by"], "elicitation",
        "{approval}"
    );
}

#[test]
fn with_elicitation_off_the_legacy_client_is_never_asked_and_the_cli_answers() {
    never_elicited("legacy");
}

#[test]
fn with_elicitation_off_the_2026_client_is_never_asked_and_the_cli_answers() {
    never_elicited("auto");
}

#[test]
fn over_streamable_http_the_client_person_approves_through_elicitation() {
    let _ = peers();
    let scratch = Scratch::new("gateway-http-elicit");
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    let server = Server::start(&manifest, &scratch.home());
    let url = format!("{}/mcp/test/desk", server.url());
    for mode in ["legacy", "auto"] {
        let target = files.join(format!("http-{mode}.txt"));
        let ops = json!([
            {"op": "call", "name": "write_file", "arguments": {"path": target, "content": mode}},
        ]);
        let mut client = PyClient::start(
            &["http", &url, AGENT],
            &ops,
            &scratch.home(),
            &[("PURKO_MCP_MODE", mode), ("PURKO_ELICIT", "accept")],
        );
        client.next("connected");
        client.next("calling");
        client.next("elicitation");
        let done = client.next("result");
        assert_eq!(done["result"]["isError"], false, "{mode}: {done}");
        client.finish();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), mode);
    }
}

/// Node (Claude Desktop is an Electron app) gives its children socket pairs, not pipes, for
/// standard input and output: the gateway drives those on its runtime too.
#[test]
fn started_by_node_on_socket_pairs_the_gateway_answers_a_read() {
    let _ = peers();
    let scratch = Scratch::new("gateway-node");
    let files = files(&scratch);
    let manifest = manifests(&scratch, &files);
    let script = r"
const { spawn } = require('child_process');
const [purko, manifest, home, path] = process.argv.slice(1);
const child = spawn(purko, ['gateway', '--stdio', '--agent', 'test/reader', manifest],
  { env: { ...process.env, PURKO_HOME: home }, stdio: ['pipe', 'pipe', 'inherit'] });
const send = (m) => child.stdin.write(JSON.stringify(m) + '\n');
let buffer = '';
child.stdout.on('data', (chunk) => {
  buffer += chunk;
  let at;
  while ((at = buffer.indexOf('\n')) >= 0) {
    const line = buffer.slice(0, at); buffer = buffer.slice(at + 1);
    const message = JSON.parse(line);
    if (message.id === 1) {
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call',
             params: { name: 'read_text_file', arguments: { path } } });
    } else if (message.id === 2) {
      console.log(JSON.stringify(message));
      child.stdin.end();
    }
  }
});
child.on('exit', (code) => process.exit(code === null ? 3 : 0));
send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
  protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'node', version: '0' } } });
setTimeout(() => { console.error('no answer in time'); process.exit(4); }, 30000);
";
    let output = Command::new("node")
        .arg("-e")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_purko"))
        .arg(&manifest)
        .arg(scratch.home())
        .arg(files.join("hello.txt"))
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let answer: Value = serde_json::from_str(stdout.trim()).expect("one JSON answer");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(text(&answer).contains("hello from the disk"), "{answer}");
}

#[test]
fn the_python_sdk_listens_through_the_gateway_to_a_resource_of_the_everything_server() {
    let scratch = Scratch::new("gateway-listen");
    let everything = peers()
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .unwrap()
        .join("server-everything/dist/index.js");
    let manifest = scratch.dir.join("listen.yaml");
    // The operator vouches that the server's simulated updates change nothing of the user's.
    std::fs::write(
        &manifest,
        format!(
            r"apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: everything, namespace: test}}
spec:
  transport: stdio
  command: node
  args: ['{}', stdio]
  catalogue:
    toggle-subscriber-updates: {{read_only: true}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: desk, namespace: test}}
spec:
  autonomyLevel: supervised
",
            everything.display()
        ),
    )
    .unwrap();
    let text = "demo://resource/dynamic/text/1";
    let ops = json!([{"op": "listen", "resources": [text], "changes": 1,
        "then": [{"op": "call", "name": "toggle-subscriber-updates", "arguments": {}}]}]);
    let mut client = PyClient::start(
        &stdio(manifest.to_str().unwrap(), "test/desk"),
        &ops,
        &scratch.home(),
        &[],
    );
    assert_eq!(client.next("connected")["protocol"], "2026-07-28");
    let listening = client.next("listening");
    assert_eq!(
        listening["honored"]["resourceSubscriptions"],
        json!([text]),
        "{listening}"
    );
    client.next("calling");
    let toggled = client.next("result");
    assert_eq!(toggled["result"]["isError"], false, "{toggled}");
    let change = client.next("change");
    assert_eq!(change["kind"], "ResourceUpdated", "{change}");
    assert_eq!(change["uri"], text, "{change}");
    client.finish();
}
