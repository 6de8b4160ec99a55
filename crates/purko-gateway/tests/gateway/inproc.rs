//! The handler in process: what `tools/list` shows and what `tools/call` answers, against an
//! engine with API tools on a loopback upstream.

use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use pretty_assertions::assert_eq;
use purko_engine::Engine;
use purko_gateway::{Gateway, META_SESSION, META_STEP};
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, MetaObject, RequestMetaObject};
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::support::PATIENCE;

struct Shop {
    port: u16,
    orders: Arc<AtomicUsize>,
    dir: PathBuf,
}

impl Shop {
    async fn start() -> Self {
        let orders = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&orders);
        let app = Router::new()
            .route(
                "/items",
                get(|| async { axum::Json(json!({"items": ["apple", "pear"]})) }),
            )
            .route(
                "/orders",
                post(move || {
                    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
                    async move { (StatusCode::CREATED, axum::Json(json!({"order": n}))) }
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let dir = crate::support::temp_dir("gateway");
        Self { port, orders, dir }
    }

    fn orders(&self) -> usize {
        self.orders.load(Ordering::SeqCst)
    }

    async fn engine(&self) -> Arc<Engine> {
        let mut text = String::new();
        for (name, autonomy) in [
            ("shop", "supervised"),
            ("auto", "full"),
            ("reader", "restricted"),
        ] {
            let _ = write!(
                text,
                r"apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: {name}, namespace: test}}
spec:
  autonomyLevel: {autonomy}
  tools:
    - name: list_items
      type: api
      description: List the items in the shop.
      endpoint: {{url: 'http://127.0.0.1:{port}/items', method: GET}}
    - name: create_order
      type: api
      description: Place an order for an item.
      inputSchema:
        type: object
        properties:
          item: {{type: string}}
          quantity: {{type: integer, minimum: 1}}
        required: [item, quantity]
      endpoint: {{url: 'http://127.0.0.1:{port}/orders', method: POST}}
---
",
                port = self.port
            );
        }
        let path = self.dir.join("agents.yaml");
        std::fs::write(&path, text).unwrap();
        crate::support::engine(path, &self.dir.join("state")).await
    }
}

impl Drop for Shop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An rmcp client connected to a gateway for `agent` over an in-memory pipe.
async fn connect(engine: &Arc<Engine>, agent: &str) -> RunningService<RoleClient, ()> {
    let gateway = Gateway::new(Arc::clone(engine), agent).unwrap();
    crate::support::connect(gateway, ()).await
}

fn params(name: &str, arguments: &Value, step: Option<&str>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(arguments.as_object().unwrap().clone());
    if let Some(step) = step {
        let mut meta = MetaObject::new();
        meta.insert(META_STEP.into(), json!(step));
        params.meta = Some(RequestMetaObject(meta));
    }
    params
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    arguments: Value,
    step: Option<&str>,
) -> CallToolResult {
    tokio::time::timeout(PATIENCE, client.call_tool(params(name, &arguments, step)))
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

#[tokio::test]
async fn tools_are_listed_with_hints_from_their_kinds_and_the_server_says_it_is_purko() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let client = connect(&engine, "test/shop").await;
    let info = client.peer_info().unwrap();
    let server = info.server_info.clone().unwrap();
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        ("purko", env!("CARGO_PKG_VERSION"))
    );
    assert!(info.instructions.as_deref().unwrap().contains("guarded"));

    let tools = client.list_all_tools().await.unwrap();
    let wire: Vec<Value> = tools
        .iter()
        .map(|t| {
            let t = serde_json::to_value(t).unwrap();
            json!({"name": t["name"], "annotations": t["annotations"], "kind": t["_meta"]["purko.io/kind"]})
        })
        .collect();
    assert_eq!(
        wire,
        vec![
            json!({"name": "list_items", "annotations": {"readOnlyHint": true}, "kind": "read"}),
            json!({"name": "create_order", "annotations": {"readOnlyHint": false, "destructiveHint": true}, "kind": "write"}),
        ]
    );
    let schema = serde_json::to_value(&tools[1].input_schema).unwrap();
    assert_eq!(schema["required"], json!(["item", "quantity"]));
}

#[tokio::test]
async fn a_read_runs_and_answers_its_json_with_the_whole_observation_structured() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let client = connect(&engine, "test/shop").await;
    let result = call(&client, "list_items", json!({}), None).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let observation = result.structured_content.clone().unwrap();
    assert_eq!(observation["status"], "success");
    assert_eq!(
        observation["observation"]["body"]["items"][0], "apple",
        "{observation}"
    );
    let body: Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(body, observation["observation"]);
    assert!(
        observation["decision_id"]
            .as_str()
            .unwrap()
            .starts_with("d_")
    );
}

#[tokio::test]
async fn a_write_waits_for_a_person_and_runs_once_per_step() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let client = Arc::new(connect(&engine, "test/shop").await);
    let args = json!({"item": "apple", "quantity": 2});
    let waiting = {
        let client = Arc::clone(&client);
        let args = args.clone();
        tokio::spawn(async move { call(&client, "create_order", args, Some("s-1")).await })
    };
    let approval = loop {
        if let Some(a) = crate::support::pending(&engine, "test/shop").await {
            break a;
        }
        assert!(
            !waiting.is_finished(),
            "the call ended without asking: {:?}",
            waiting.await
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(approval.tool, "create_order");
    assert_eq!(shop.orders(), 0, "nothing runs before a person says yes");
    crate::support::approve(&engine, &approval.id).await;
    let done = tokio::time::timeout(PATIENCE, waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.is_error, Some(false), "{done:?}");
    assert_eq!(shop.orders(), 1);

    let again = call(&client, "create_order", args, Some("s-1")).await;
    assert_eq!(again.structured_content.unwrap()["replayed"], true);
    assert_eq!(shop.orders(), 1, "the same step never runs twice");
}

#[tokio::test]
async fn without_a_step_in_meta_each_call_is_a_new_step() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let client = connect(&engine, "test/auto").await;
    let args = json!({"item": "pear", "quantity": 1});
    for _ in 0..2 {
        let result = call(&client, "create_order", args.clone(), None).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
    assert_eq!(shop.orders(), 2);
}

#[tokio::test]
async fn a_restricted_agent_sees_no_writes_and_a_write_call_is_an_error_with_its_code() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let client = connect(&engine, "test/reader").await;
    let names: Vec<String> = crate::support::tool_names(&client).await;
    assert_eq!(names, ["list_items"]);
    let refused = call(
        &client,
        "create_order",
        json!({"item": "fig", "quantity": 1}),
        None,
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        text(&refused).starts_with("AUTONOMY_BLOCKED: "),
        "{}",
        text(&refused)
    );
    assert!(
        text(&refused).contains("\nremediation: "),
        "{}",
        text(&refused)
    );
    assert_eq!(refused.structured_content.unwrap()["status"], "denied");
    let unknown = call(&client, "nope", json!({}), None).await;
    assert!(
        text(&unknown).starts_with("TOOL_NOT_FOUND"),
        "{}",
        text(&unknown)
    );
    assert_eq!(shop.orders(), 0);
}

#[tokio::test]
async fn an_unknown_agent_is_refused_before_serving() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let error = Gateway::new(engine, "test/nobody").unwrap_err();
    assert!(
        error.to_string().contains("no agent named 'test/nobody'"),
        "{error}"
    );
    assert!(error.hint().contains("namespace/name"));
}

#[tokio::test]
async fn the_listing_follows_the_agents_view_when_an_upstream_adds_a_tool() {
    let shop = Shop::start().await;
    let path = shop.dir.join("desk.yaml");
    std::fs::write(
        &path,
        "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: desk, namespace: test}\nspec:\n  autonomyLevel: supervised\n",
    )
    .unwrap();
    let engine = crate::support::engine(path, &shop.dir.join("desk-state")).await;
    let client = connect(&engine, "test/desk").await;
    assert!(client.list_all_tools().await.unwrap().is_empty());
    assert!(
        client.list_all_tools().await.unwrap().is_empty(),
        "from the cache"
    );

    // What the registry does when a server's list changes: the agent's view is rebuilt.
    let mut spec = purko_protocol::ToolSpec::new("lookup_stock", "Look up the stock of an item.");
    spec.input_schema = Some(json!({"type": "object"}));
    let tool = purko_mcp::McpTool {
        exposed: "lookup_stock".into(),
        server: "inventory".into(),
        upstream: "lookup_stock".into(),
        spec,
    };
    engine.agent("test/desk").unwrap().rebuild(&[tool]).unwrap();
    let names: Vec<String> = crate::support::tool_names(&client).await;
    assert_eq!(names, ["lookup_stock"]);
}

#[tokio::test]
async fn a_session_named_in_meta_makes_two_connections_one_conversation() {
    let shop = Shop::start().await;
    let engine = shop.engine().await;
    let with_session = |session: &str| {
        let mut params = params(
            "create_order",
            &json!({"item": "pear", "quantity": 1}),
            Some("7"),
        );
        if let Some(meta) = params.meta.as_mut() {
            meta.0.insert(META_SESSION.into(), json!(session));
        }
        params
    };
    let first = connect(&engine, "test/auto").await;
    let ran = tokio::time::timeout(PATIENCE, first.call_tool(with_session("conversation-1")))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(ran.is_error, Some(true), "{ran:?}");
    assert_eq!(shop.orders(), 1);

    // Another connection (as every request is on 2026-07-28 over HTTP), the same session and
    // step: the stored result, not a second order.
    let second = connect(&engine, "test/auto").await;
    let again = tokio::time::timeout(PATIENCE, second.call_tool(with_session("conversation-1")))
        .await
        .unwrap()
        .unwrap();
    let again = serde_json::to_value(&again.structured_content).unwrap();
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(shop.orders(), 1);

    // Another session named: another call.
    let other = tokio::time::timeout(PATIENCE, second.call_tool(with_session("conversation-2")))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(other.is_error, Some(true), "{other:?}");
    assert_eq!(shop.orders(), 2);
}
