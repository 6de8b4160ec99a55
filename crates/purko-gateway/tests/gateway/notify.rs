//! What the gateway tells its client unasked: progress while a call waits for a person, and
//! `notifications/tools/list_changed` when what the agent may call changes.

use std::path::PathBuf;
use std::sync::Arc;

use purko_engine::Engine;
use purko_gateway::Gateway;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
use rmcp::service::RunningService;
use serde_json::json;
use tokio::sync::mpsc;

use crate::support::PATIENCE;

struct Desk {
    dir: PathBuf,
    engine: Arc<Engine>,
}

impl Desk {
    async fn start() -> Self {
        let port = crate::support::order_desk().await;
        let dir = crate::support::temp_dir("notify");
        let path = dir.join("agents.yaml");
        std::fs::write(
            &path,
            format!(
                r"apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: shop, namespace: test}}
spec:
  autonomyLevel: supervised
  tools:
    - name: create_order
      type: api
      description: Place an order for an item.
      endpoint: {{url: 'http://127.0.0.1:{port}/orders', method: POST}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: desk, namespace: test}}
spec:
  autonomyLevel: supervised
"
            ),
        )
        .unwrap();
        let engine = crate::support::engine(path, &dir.join("state")).await;
        Self { dir, engine }
    }

    async fn connect(
        &self,
        agent: &str,
    ) -> (
        RunningService<RoleClient, crate::support::Listener>,
        mpsc::UnboundedReceiver<String>,
    ) {
        let gateway = Gateway::new(Arc::clone(&self.engine), agent).unwrap();
        let (heard, hear) = mpsc::unbounded_channel();
        let client = crate::support::connect(gateway, crate::support::Listener { heard }).await;
        (client, hear)
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn next(hear: &mut mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(PATIENCE, hear.recv())
        .await
        .expect("nothing was heard")
        .unwrap()
}

#[tokio::test]
async fn a_call_waiting_for_a_person_sends_progress_naming_its_approval() {
    let desk = Desk::start().await;
    let (client, mut hear) = desk.connect("test/shop").await;
    let client = Arc::new(client);
    let waiting = {
        let client = Arc::clone(&client);
        tokio::spawn(async move {
            let mut params = CallToolRequestParams::new("create_order")
                .with_arguments(json!({"item": "pear"}).as_object().unwrap().clone());
            let mut meta = RequestMetaObject::new();
            meta.set_progress_token(ProgressToken(NumberOrString::Number(7)));
            params.meta = Some(meta);
            client.call_tool(params).await
        })
    };
    let heard = next(&mut hear).await;
    let approval = crate::support::pending(&desk.engine, "test/shop")
        .await
        .expect("an approval is waiting");
    assert!(
        heard.contains(approval.id.as_str()) && heard.contains("create_order"),
        "{heard}"
    );
    assert!(heard.contains("purko approvals approve"), "{heard}");
    crate::support::approve_and_finish(&desk.engine, &approval.id, waiting).await;
}

#[tokio::test]
async fn the_client_hears_when_the_agents_tools_change_and_not_when_they_do_not() {
    let desk = Desk::start().await;
    let (client, mut hear) = desk.connect("test/desk").await;
    let capabilities = client.peer_info().unwrap().capabilities.clone();
    assert_eq!(
        capabilities.tools.and_then(|t| t.list_changed),
        Some(true),
        "the gateway says it tells of list changes"
    );
    assert!(client.list_all_tools().await.unwrap().is_empty());

    let agent = desk.engine.agent("test/desk").unwrap();
    let mut spec = purko_protocol::ToolSpec::new("lookup_stock", "Look up the stock of an item.");
    spec.input_schema = Some(json!({"type": "object"}));
    let tool = purko_mcp::McpTool {
        exposed: "lookup_stock".into(),
        server: "inventory".into(),
        upstream: "lookup_stock".into(),
        spec,
    };
    agent.rebuild(std::slice::from_ref(&tool)).unwrap();
    assert_eq!(next(&mut hear).await, "tools/list_changed");
    let names: Vec<String> = crate::support::tool_names(&client).await;
    assert_eq!(names, ["lookup_stock"]);
    // A rebuild with nothing new (a server's state changed, say) is not news.
    agent.rebuild(&[tool]).unwrap();
    agent.rebuild(&[]).unwrap();
    assert_eq!(next(&mut hear).await, "tools/list_changed");
    assert!(client.list_all_tools().await.unwrap().is_empty());
    assert!(
        hear.try_recv().is_err(),
        "one change, one notification: the rebuild with the same tools said nothing"
    );
}
