//! Prompts and resources of real upstreams through the gateway: two npm `server-everything`
//! processes (which share every prompt name) and the npm filesystem server (which has neither),
//! for an agent that sees every server and one that lists a filesystem tool only.

use std::path::PathBuf;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use purko_engine::Engine;
use purko_gateway::Gateway;
use rmcp::model::{ErrorCode, GetPromptRequestParams, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceError};
use serde_json::json;

use crate::support::PATIENCE;

const DOCUMENT: &str = "demo://resource/static/document/architecture.md";

struct Upstreams {
    dir: PathBuf,
    engine: Arc<Engine>,
}

impl Upstreams {
    async fn start() -> Self {
        let dir = crate::support::temp_dir("upstreams");
        std::fs::create_dir_all(dir.join("files")).unwrap();
        let everything = crate::support::peer("server-everything");
        let path = dir.join("manifests.yaml");
        std::fs::write(
            &path,
            format!(
                r"apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: one, namespace: test}}
spec: {{transport: stdio, command: node, args: ['{everything}', stdio]}}
---
apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: two, namespace: test}}
spec: {{transport: stdio, command: node, args: ['{everything}', stdio]}}
---
apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: files, namespace: test}}
spec: {{transport: stdio, command: node, args: ['{files}', '{dir}']}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: all, namespace: test}}
spec: {{autonomyLevel: supervised}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: reader, namespace: test}}
spec:
  autonomyLevel: supervised
  tools:
    - {{name: read_text_file, type: mcp}}
",
                everything = everything.display(),
                files = crate::support::peer("server-filesystem").display(),
                dir = dir.join("files").display(),
            ),
        )
        .unwrap();
        let engine = crate::support::engine(path, &dir.join("state")).await;
        Self { dir, engine }
    }

    async fn connect(&self, agent: &str) -> RunningService<RoleClient, ()> {
        let gateway = Gateway::new(Arc::clone(&self.engine), agent).unwrap();
        crate::support::connect(gateway, ()).await
    }
}

impl Drop for Upstreams {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn code_of(error: &ServiceError) -> Option<ErrorCode> {
    match error {
        ServiceError::McpError(e) => Some(e.code),
        _ => None,
    }
}

#[tokio::test]
async fn prompts_shared_by_two_servers_are_named_by_server_and_answered_by_the_right_one() {
    let upstreams = Upstreams::start().await;
    let client = upstreams.connect("test/all").await;
    let capabilities = client.peer_info().unwrap().capabilities.clone();
    assert!(capabilities.prompts.is_some() && capabilities.resources.is_some());

    let mut names: Vec<String> = client
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    names.sort();
    assert!(names.contains(&"one/simple-prompt".to_owned()), "{names:?}");
    assert!(names.contains(&"two/args-prompt".to_owned()), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("one/") || n.starts_with("two/"))
    );

    let mut params = GetPromptRequestParams::new("two/args-prompt");
    params.arguments = Some(json!({"city": "Lisbon"}).as_object().unwrap().clone());
    let prompt = tokio::time::timeout(PATIENCE, client.get_prompt(params))
        .await
        .unwrap()
        .unwrap();
    let text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(text.contains("Lisbon"), "{text}");

    let unknown = client
        .get_prompt(GetPromptRequestParams::new("simple-prompt"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&unknown),
        Some(ErrorCode::INVALID_PARAMS),
        "{unknown}"
    );
    assert!(unknown.to_string().contains("simple-prompt"), "{unknown}");
}

#[tokio::test]
async fn resources_and_templates_pass_through_and_a_read_finds_its_server() {
    let upstreams = Upstreams::start().await;
    let client = upstreams.connect("test/all").await;
    let resources = client.list_all_resources().await.unwrap();
    assert!(
        resources.iter().any(|r| r.uri == DOCUMENT),
        "{:?}",
        resources.iter().map(|r| &r.uri).collect::<Vec<_>>()
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template.starts_with("demo://resource/dynamic/")),
        "{templates:?}"
    );
    let read = tokio::time::timeout(
        PATIENCE,
        client.read_resource(ReadResourceRequestParams::new(DOCUMENT)),
    )
    .await
    .unwrap()
    .unwrap();
    let text = serde_json::to_string(&read.contents).unwrap();
    assert!(text.contains(DOCUMENT), "{text}");

    let missing = client
        .read_resource(ReadResourceRequestParams::new("demo://nothing/here"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&missing),
        Some(ErrorCode::RESOURCE_NOT_FOUND),
        "{missing}"
    );
}

#[tokio::test]
async fn an_agent_listing_one_filesystem_tool_sees_no_other_servers_prompts_or_resources() {
    let upstreams = Upstreams::start().await;
    let client = upstreams.connect("test/reader").await;
    let tools: Vec<String> = crate::support::tool_names(&client).await;
    assert_eq!(tools, ["read_text_file"]);
    assert!(client.list_all_prompts().await.unwrap().is_empty());
    assert!(client.list_all_resources().await.unwrap().is_empty());
    let hidden = client
        .read_resource(ReadResourceRequestParams::new(DOCUMENT))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&hidden),
        Some(ErrorCode::RESOURCE_NOT_FOUND),
        "{hidden}"
    );
    let hidden = client
        .get_prompt(GetPromptRequestParams::new("one/simple-prompt"))
        .await
        .unwrap_err();
    assert_eq!(
        code_of(&hidden),
        Some(ErrorCode::INVALID_PARAMS),
        "{hidden}"
    );
}
