//! server-filesystem and server-memory: real tool round trips, annotations, several servers in
//! one registry, and names that collide.

use pretty_assertions::assert_eq;
use purko_protocol::Marks;
use serde_json::json;

use crate::{args, assert_ready, exposed, filesystem, memory, spec, started, text};

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("purko-mcp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    // The server resolves its allowed directory; keep the resolved form so paths match.
    dir.canonicalize().expect("the temp dir resolves")
}

#[tokio::test]
async fn filesystem_writes_then_reads_a_file_and_carries_annotations() {
    let dir = temp_dir("fs");
    let mut fs = spec("fs", filesystem(&dir));
    fs.catalogue.insert(
        "write_file".into(),
        Marks {
            destructive: true,
            ..Marks::default()
        },
    );
    let registry = started(vec![fs]).await;
    let status = assert_ready(&registry, "fs");
    assert_eq!(status.warnings, Vec::<String>::new());
    let tools = registry.tools();
    let read = tools
        .iter()
        .find(|t| t.exposed == "read_text_file")
        .expect("read_text_file");
    assert_eq!(
        read.spec
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint),
        Some(true)
    );
    let write = tools
        .iter()
        .find(|t| t.exposed == "write_file")
        .expect("write_file");
    assert_eq!(
        write
            .spec
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint),
        Some(false)
    );
    assert!(write.spec.marks.destructive);
    assert!(!read.spec.marks.destructive);

    let path = dir.join("note.txt").display().to_string();
    let wrote = registry
        .call(
            "write_file",
            args(json!({"path": path, "content": "hello from purko"})),
            Some("w-1"),
        )
        .await;
    assert!(wrote.is_success(), "{wrote:#?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("note.txt")).unwrap(),
        "hello from purko"
    );
    let read = registry
        .call("read_text_file", args(json!({"path": path})), None)
        .await;
    assert_eq!(text(&read), "hello from purko");

    let outside = registry
        .call("read_text_file", args(json!({"path": "/etc/passwd"})), None)
        .await;
    assert_eq!(
        outside.code,
        Some(purko_protocol::Code::UpstreamError),
        "{outside:#?}"
    );
    registry.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn two_servers_make_one_union_without_prefixes() {
    let dir = temp_dir("union");
    let registry = started(vec![spec("fs", filesystem(&dir)), spec("memory", memory())]).await;
    let fs = assert_ready(&registry, "fs");
    let mem = assert_ready(&registry, "memory");
    let names = exposed(&registry);
    assert_eq!(names.len(), fs.tool_count + mem.tool_count);
    assert!(names.iter().all(|n| !n.contains('/')), "{names:?}");
    // Server order, then upstream order.
    let first_memory = names.iter().position(|n| n == "create_entities").unwrap();
    assert!(names[..first_memory].iter().any(|n| n == "read_text_file"));
    assert!(names[first_memory..].iter().all(|n| n != "read_text_file"));

    let created = registry
        .call(
            "create_entities",
            args(json!({"entities": [{"name": "purko", "entityType": "tool", "observations": ["guards calls"]}]})),
            Some("c-1"),
        )
        .await;
    assert!(created.is_success(), "{created:#?}");
    let graph = registry.call("read_graph", args(json!({})), None).await;
    assert!(text(&graph).contains("guards calls"), "{graph:#?}");
    registry.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn two_memory_servers_expose_every_colliding_name_with_its_server() {
    let a = temp_dir("mem1");
    let b = temp_dir("mem2");
    let with_file = |name: &str, dir: &std::path::Path| {
        let mut s = spec(name, memory());
        if let purko_mcp::Transport::Stdio { env, .. } = &mut s.transport {
            env.push((
                "MEMORY_FILE_PATH".into(),
                dir.join("memory.jsonl").display().to_string(),
            ));
        }
        s
    };
    let registry = started(vec![with_file("mem1", &a), with_file("mem2", &b)]).await;
    assert_ready(&registry, "mem1");
    assert_ready(&registry, "mem2");
    let names = exposed(&registry);
    assert!(
        names.iter().any(|n| n == "mem1/create_entities"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n == "mem2/create_entities"),
        "{names:?}"
    );
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("mem1/") || n.starts_with("mem2/")),
        "{names:?}"
    );
    let tool = registry
        .tools()
        .iter()
        .find(|t| t.exposed == "mem2/read_graph")
        .cloned()
        .unwrap();
    assert_eq!(
        (tool.server.as_str(), tool.upstream.as_str()),
        ("mem2", "read_graph")
    );
    assert_eq!(tool.spec.name, "mem2/read_graph");

    let created = registry
        .call(
            "mem1/create_entities",
            args(json!({"entities": [{"name": "only-in-one", "entityType": "t", "observations": []}]})),
            None,
        )
        .await;
    assert!(created.is_success(), "{created:#?}");
    let one = registry
        .call("mem1/read_graph", args(json!({})), None)
        .await;
    let two = registry
        .call("mem2/read_graph", args(json!({})), None)
        .await;
    assert!(text(&one).contains("only-in-one"));
    assert!(!text(&two).contains("only-in-one"));
    let bare = registry.call("read_graph", args(json!({})), None).await;
    assert_eq!(
        bare.code,
        Some(purko_protocol::Code::ToolNotFound),
        "{bare:#?}"
    );
    registry.shutdown().await;
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}
