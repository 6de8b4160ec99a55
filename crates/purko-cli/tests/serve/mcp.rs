//! MCP servers behind `purko serve`: the npm filesystem reference server as a real upstream.

use std::path::{Path, PathBuf};

use crate::support::{AGENT, OPERATOR, Scratch, Server, stderr, stdout};

pub fn peers() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let server =
        root.join("peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        server.exists(),
        "the MCP reference servers are missing: run npm ci --prefix peers"
    );
    server.canonicalize().unwrap()
}

pub fn manifests(scratch: &Scratch, files: &Path) -> PathBuf {
    let path = scratch.dir.join("mcp.yaml");
    std::fs::write(
        &path,
        format!(
            r"apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: files, namespace: test}}
spec:
  transport: stdio
  command: node
  args: ['{server}', '{files}']
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: desk, namespace: test}}
spec:
  autonomyLevel: supervised
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: reader, namespace: test}}
spec:
  autonomyLevel: restricted
",
            server = peers().display(),
            files = files.display(),
        ),
    )
    .unwrap();
    path
}

fn call(
    server: &Server,
    agent: &str,
    step: &str,
    name: &str,
    arguments: &str,
    wait: bool,
) -> serde_json::Value {
    let body = format!(
        r#"{{"agent": "{agent}", "session": "s1", "step": "{step}", "name": "{name}", "arguments": {arguments}, "wait": {wait}}}"#
    );
    let (status, observation) = server.api("POST", "/api/tools/call", Some(AGENT), Some(&body));
    assert_eq!(status, 200, "{observation}");
    observation
}

#[test]
fn a_filesystem_server_read_runs_and_its_write_waits_for_a_person() {
    let scratch = Scratch::new("mcp");
    let files = scratch.dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("hello.txt"), "hello from the disk").unwrap();
    let files = files.canonicalize().unwrap();
    let server = Server::start(&manifests(&scratch, &files), &scratch.home());

    let (status, listing) = server.api("GET", "/api/mcp/tools?agent=test/desk", Some(AGENT), None);
    assert_eq!(status, 200, "{listing}");
    let tools = &listing["servers"][0]["tools"];
    assert_eq!(listing["servers"][0]["name"], "files", "{listing}");
    let kind = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["kind"].as_str().unwrap().to_owned())
    };
    assert_eq!(kind("read_text_file").as_deref(), Some("read"), "{listing}");
    assert_eq!(kind("write_file").as_deref(), Some("write"), "{listing}");

    let path = files.join("hello.txt");
    let read = call(
        &server,
        "test/desk",
        "1",
        "read_text_file",
        &format!(r#"{{"path": "{}"}}"#, path.display()),
        true,
    );
    assert_eq!(read["status"], "success", "{read}");
    assert!(read.to_string().contains("hello from the disk"), "{read}");

    let target = files.join("new.txt");
    let args = format!(
        r#"{{"path": "{}", "content": "written once"}}"#,
        target.display()
    );
    let pending = call(&server, "test/desk", "2", "write_file", &args, false);
    assert_eq!(pending["status"], "pending", "{pending}");
    assert!(
        !target.exists(),
        "nothing is written before a person says yes"
    );
    let approval = pending["approval_id"].as_str().unwrap();
    let approve = server.purko(&["approvals", "approve", approval]);
    assert!(approve.status.success(), "{}", stderr(&approve));
    let done = call(&server, "test/desk", "2", "write_file", &args, false);
    assert_eq!(done["status"], "success", "{done}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written once");
    let again = call(&server, "test/desk", "2", "write_file", &args, false);
    assert_eq!(again["replayed"], true, "{again}");

    let explain = server.purko(&["explain", pending["decision_id"].as_str().unwrap()]);
    assert!(
        stdout(&explain).contains("write_file"),
        "{}",
        stdout(&explain)
    );
}

#[test]
fn a_restricted_agent_neither_sees_nor_runs_the_write_tools() {
    let scratch = Scratch::new("mcp-restricted");
    let files = scratch.dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    let files = files.canonicalize().unwrap();
    let server = Server::start(&manifests(&scratch, &files), &scratch.home());

    let (status, tools) = server.api("GET", "/api/tools?agent=test/reader", Some(OPERATOR), None);
    assert_eq!(status, 200, "{tools}");
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_text_file"), "{names:?}");
    assert!(
        !names.contains(&"write_file") && !names.contains(&"move_file"),
        "{names:?}"
    );

    let target = files.join("nope.txt");
    let refused = call(
        &server,
        "test/reader",
        "1",
        "write_file",
        &format!(r#"{{"path": "{}", "content": "x"}}"#, target.display()),
        true,
    );
    assert_eq!(refused["code"], "AUTONOMY_BLOCKED", "{refused}");
    assert!(!target.exists());
}
