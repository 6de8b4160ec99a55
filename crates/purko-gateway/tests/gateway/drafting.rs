//! `purko mcp`'s drafting server in process: an rmcp client over `tokio::io::duplex`, an engine
//! on a real `SQLite` store with the npm filesystem reference server registered (a real node
//! process) and API tools.

use std::path::PathBuf;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use purko_engine::{CallRequest, Engine, EngineOptions};
use purko_gateway::{CLASSIFY_PROMPT, Drafting};
use purko_guard::KindsFile;
use purko_protocol::{DecisionId, Kind, KindSource};
use purko_store::SqliteStore;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, GetPromptRequestParams};
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::PATIENCE;

const ASSISTANT_HEADING: &str = "# Proposed by an assistant (set_tool_kinds)";

/// A working folder with a folder of files, the manifests of a filesystem server and two agents:
/// `test/desk` (every filesystem tool, `guardrail.toolKinds: desk_kinds.yaml`) and `test/shop`
/// (two API tools, no kinds file).
struct Desk {
    dir: PathBuf,
    manifests: purko_config::Manifests,
}

impl Desk {
    fn new() -> Self {
        let dir = crate::support::temp_dir("drafting");
        let files = dir.join("files");
        std::fs::create_dir_all(&files).unwrap();
        let dir = dir.canonicalize().unwrap();
        std::fs::write(files.join("hello.txt"), "hello from the disk").unwrap();
        let path = dir.join("agents.yaml");
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
  guardrail:
    toolKinds: desk_kinds.yaml
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: shop, namespace: test}}
spec:
  autonomyLevel: supervised
  tools:
    - name: list_items
      type: api
      description: List the items in the shop.
      endpoint: {{url: 'http://127.0.0.1:9/items', method: GET}}
    - name: get_or_create_user
      type: api
      description: Gets a user, or creates one.
      endpoint: {{url: 'http://127.0.0.1:9/users', method: GET}}
",
                server = crate::support::peer("server-filesystem").display(),
                files = dir.join("files").display(),
            ),
        )
        .unwrap();
        let manifests = purko_config::load(&[path]).unwrap();
        Self { dir, manifests }
    }

    fn kinds_path(&self) -> PathBuf {
        self.dir.join("desk_kinds.yaml")
    }

    async fn engine(&self) -> Arc<Engine> {
        let store = SqliteStore::open(&self.dir.join("state")).unwrap();
        Arc::new(
            Engine::new(
                &Drafting::engine_manifests(&self.manifests),
                Arc::new(store),
                EngineOptions::default(),
            )
            .await
            .unwrap(),
        )
    }

    async fn connect(&self, engine: &Arc<Engine>, agent: &str) -> RunningService<RoleClient, ()> {
        let agent = self.manifests.agent(agent).unwrap();
        let drafting = Drafting::new(Arc::clone(engine), agent, &self.dir).unwrap();
        crate::support::connect(drafting, ()).await
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    arguments: Value,
) -> CallToolResult {
    let params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().unwrap().clone());
    tokio::time::timeout(PATIENCE, client.call_tool(params))
        .await
        .unwrap()
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn entry(file: &KindsFile, name: &str) -> (Kind, KindSource, String) {
    let e = file
        .tools
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not in the file"));
    (e.kind, e.source, e.reason.clone())
}

async fn prompt(client: &RunningService<RoleClient, ()>) -> String {
    let result = tokio::time::timeout(
        PATIENCE,
        client.get_prompt(GetPromptRequestParams::new(CLASSIFY_PROMPT)),
    )
    .await
    .unwrap()
    .unwrap();
    serde_json::to_value(&result.messages).unwrap()[0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn the_server_lists_its_three_tools_and_the_prompt() {
    let desk = Desk::new();
    let engine = desk.engine().await;
    let client = desk.connect(&engine, "test/desk").await;
    let tools: Vec<String> = crate::support::tool_names(&client).await;
    assert_eq!(tools, ["writes_file", "set_tool_kinds", "explain_decision"]);
    let prompts: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(prompts, [CLASSIFY_PROMPT]);
}

#[tokio::test]
async fn writes_file_drafts_every_filesystem_tool_and_keeps_the_persons_entry() {
    let desk = Desk::new();
    std::fs::write(
        desk.kinds_path(),
        "infer: true\ntools:\n  list_allowed_directories:\n    kind: write\n    source: you\n    reason: \"I want to see this one asked\"\n",
    )
    .unwrap();
    let engine = desk.engine().await;
    let client = desk.connect(&engine, "test/desk").await;

    let result = call(&client, "writes_file", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let answer = result.structured_content.clone().unwrap();
    assert_eq!(
        answer["path"],
        desk.kinds_path().display().to_string(),
        "{answer}"
    );
    assert!(answer["uncertain"].is_array(), "{answer}");
    assert_eq!(answer["kept_from_you"], json!(["list_allowed_directories"]));
    assert!(
        text(&result).contains("Kept as you wrote them (source: you): list_allowed_directories"),
        "{}",
        text(&result)
    );

    let file = KindsFile::load(&desk.kinds_path()).unwrap();
    assert_eq!(entry(&file, "write_file").0, Kind::Write);
    assert_eq!(entry(&file, "read_text_file").0, Kind::Read);
    assert_eq!(
        entry(&file, "list_allowed_directories"),
        (
            Kind::Write,
            KindSource::You,
            "I want to see this one asked".to_owned()
        )
    );
    let catalogue = engine.agent("test/desk").unwrap().view();
    for tool in catalogue.guard.catalogue().tools() {
        assert!(
            file.tools.contains_key(&tool.name),
            "{} is missing",
            tool.name
        );
    }
    let total: u64 = answer["by_kind"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(total, file.tools.len() as u64, "{answer}");
    assert_eq!(answer["by_source"]["you"], 1, "{answer}");
}

#[tokio::test]
async fn set_tool_kinds_lands_in_the_assistant_section_and_survives_a_second_draft() {
    let desk = Desk::new();
    // No kinds file yet: the engine starts without it, and drafting writes it.
    let engine = desk.engine().await;
    let client = desk.connect(&engine, "test/desk").await;
    let first = call(&client, "writes_file", json!({})).await;
    assert_eq!(first.is_error, Some(false), "{}", text(&first));
    let mut file = KindsFile::load(&desk.kinds_path()).unwrap();
    file.tools
        .get_mut("list_allowed_directories")
        .unwrap()
        .source = KindSource::You;
    std::fs::write(desk.kinds_path(), file.to_yaml()).unwrap();

    let proposed = call(
        &client,
        "set_tool_kinds",
        json!({"tools": {
            "directory_tree": {"kind": "read", "reason": "returns the tree as JSON, changes nothing"},
            "list_allowed_directories": {"kind": "read", "reason": "only lists"},
        }}),
    )
    .await;
    assert_eq!(proposed.is_error, Some(false), "{}", text(&proposed));
    let said = text(&proposed);
    assert!(said.contains("directory_tree: read"), "{said}");
    assert!(
        said.contains("Not recorded: list_allowed_directories")
            && said.contains("never replaces a person's entry"),
        "{said}"
    );

    let written = std::fs::read_to_string(desk.kinds_path()).unwrap();
    let section = written
        .split_once(ASSISTANT_HEADING)
        .unwrap_or_else(|| panic!("no assistant section in\n{written}"))
        .1;
    let section = section
        .split_once("# The rest.")
        .map_or(section, |(s, _)| s);
    assert!(
        section.contains("  directory_tree:\n    kind: read\n    source: assistant\n"),
        "{written}"
    );
    assert!(!section.contains("list_allowed_directories"), "{written}");
    let file = KindsFile::load(&desk.kinds_path()).unwrap();
    assert_eq!(entry(&file, "list_allowed_directories").1, KindSource::You);

    let again = call(&client, "writes_file", json!({})).await;
    assert_eq!(again.is_error, Some(false), "{}", text(&again));
    assert_eq!(
        again.structured_content.clone().unwrap()["assistant"],
        json!(["directory_tree"])
    );
    let file = KindsFile::load(&desk.kinds_path()).unwrap();
    assert_eq!(
        entry(&file, "directory_tree"),
        (
            Kind::Read,
            KindSource::Assistant,
            "returns the tree as JSON, changes nothing".to_owned()
        )
    );
    assert!(
        std::fs::read_to_string(desk.kinds_path())
            .unwrap()
            .contains(ASSISTANT_HEADING)
    );
}

#[tokio::test]
async fn unknown_tools_and_kinds_are_refused_and_the_file_is_unchanged() {
    let desk = Desk::new();
    let engine = desk.engine().await;
    let client = desk.connect(&engine, "test/desk").await;
    let drafted = call(&client, "writes_file", json!({})).await;
    assert_eq!(drafted.is_error, Some(false), "{}", text(&drafted));
    let before = std::fs::read(desk.kinds_path()).unwrap();

    let refused = call(
        &client,
        "set_tool_kinds",
        json!({"tools": {
            "write_file": {"kind": "write", "reason": "fine on its own"},
            "write_fiel": {"kind": "write", "reason": "a typo"},
            "read_text_file": {"kind": "readish", "reason": "an unknown kind"},
        }}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    let said = text(&refused);
    assert!(
        said.starts_with("INVALID_PROPOSAL: nothing was written"),
        "{said}"
    );
    assert!(
        said.contains("unknown tool(s): 'write_fiel' (did you mean write_file"),
        "{said}"
    );
    assert!(
        said.contains("unknown kind(s): 'readish' for 'read_text_file'"),
        "{said}"
    );
    assert!(said.contains("read, write, sends_out"), "{said}");
    assert_eq!(std::fs::read(desk.kinds_path()).unwrap(), before);

    let impersonating = call(
        &client,
        "set_tool_kinds",
        json!({"tools": {"write_file": {"kind": "read", "reason": "trust me", "source": "you"}}}),
    )
    .await;
    assert_eq!(impersonating.is_error, Some(true));
    assert!(
        text(&impersonating).contains("unknown key(s) source"),
        "{}",
        text(&impersonating)
    );
    assert_eq!(std::fs::read(desk.kinds_path()).unwrap(), before);

    let outside = call(&client, "writes_file", json!({"path": "../elsewhere.yaml"})).await;
    assert_eq!(outside.is_error, Some(true));
    assert!(
        text(&outside).starts_with("INVALID_PATH"),
        "{}",
        text(&outside)
    );
}

#[tokio::test]
async fn explain_decision_explains_a_call_made_through_the_engine() {
    let desk = Desk::new();
    let engine = desk.engine().await;
    let client = desk.connect(&engine, "test/desk").await;
    let hello = desk.dir.join("files/hello.txt");
    let observation = engine
        .call(CallRequest {
            agent: "test/desk".into(),
            session: "s1".into(),
            step: "1".into(),
            name: "read_text_file".into(),
            arguments: json!({"path": hello.display().to_string()}),
            idempotency_key: None,
            wait: Some(false),
        })
        .await
        .unwrap();
    let id = observation.decision_id.clone().unwrap();

    let explained = call(
        &client,
        "explain_decision",
        json!({"decision_id": id.to_string()}),
    )
    .await;
    assert_eq!(explained.is_error, Some(false), "{}", text(&explained));
    let said = text(&explained);
    assert!(said.starts_with(&format!("decision {id}: ALLOW")), "{said}");
    assert!(said.contains("read_text_file"), "{said}");
    assert!(said.contains("kind        read"), "{said}");
    assert_eq!(
        explained.structured_content.clone().unwrap()["decision_id"],
        id.to_string()
    );

    let garbage = call(
        &client,
        "explain_decision",
        json!({"decision_id": "not-an-id"}),
    )
    .await;
    assert_eq!(garbage.is_error, Some(true));
    assert!(
        text(&garbage).starts_with("NOT_A_DECISION_ID"),
        "{}",
        text(&garbage)
    );

    let unknown = DecisionId::new(None, true, "00000000", &ulid::Ulid::generate().to_string());
    let missing = call(
        &client,
        "explain_decision",
        json!({"decision_id": unknown.to_string()}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true));
    assert!(
        text(&missing).starts_with("NO_SUCH_DECISION"),
        "{}",
        text(&missing)
    );
}

#[tokio::test]
async fn the_prompt_lists_the_uncertain_tools_until_an_assistant_proposes_their_kinds() {
    let desk = Desk::new();
    let engine = desk.engine().await;
    let client = desk.connect(&engine, "test/shop").await;

    let asked = prompt(&client).await;
    assert!(asked.contains("## get_or_create_user"), "{asked}");
    assert!(
        asked.contains("description: Gets a user, or creates one."),
        "{asked}"
    );
    assert!(asked.contains("signals seen:"), "{asked}");
    assert!(!asked.contains("## list_items"), "{asked}");
    for definition in [
        "- read: reads, changes nothing, sends nothing to anyone.",
        "- sends_out: delivers data to an address, a URL, a person or a channel.",
        "`set_tool_kinds`",
    ] {
        assert!(asked.contains(definition), "{asked}");
    }

    // The shop names no kinds file: drafting needs a path.
    let nowhere = call(&client, "writes_file", json!({})).await;
    assert_eq!(nowhere.is_error, Some(true));
    let said = text(&nowhere);
    assert!(said.starts_with("NO_KINDS_FILE"), "{said}");
    assert!(
        said.contains("pass a path") && said.contains("toolKinds"),
        "{said}"
    );

    let drafted = call(&client, "writes_file", json!({"path": "shop_kinds.yaml"})).await;
    assert_eq!(drafted.is_error, Some(false), "{}", text(&drafted));
    assert_eq!(
        drafted.structured_content.clone().unwrap()["uncertain"][0]["name"],
        "get_or_create_user"
    );
    let proposed = call(
        &client,
        "set_tool_kinds",
        json!({"tools": {"get_or_create_user": {"kind": "write", "reason": "creates a user when there is none"}}}),
    )
    .await;
    assert_eq!(proposed.is_error, Some(false), "{}", text(&proposed));
    let file = KindsFile::load(&desk.dir.join("shop_kinds.yaml")).unwrap();
    assert_eq!(entry(&file, "get_or_create_user").1, KindSource::Assistant);
    let asked = prompt(&client).await;
    assert!(asked.contains("Nothing is uncertain now"), "{asked}");
}
