//! Files and folders: several documents per file, folders read recursively in sorted order,
//! agents unique across files, and clear errors for what is not there.

use pretty_assertions::assert_eq;
use purko_config::{Error, load};

use crate::{Scratch, agent_yaml};

#[test]
fn a_folder_loads_recursively_in_sorted_order_and_skips_other_files() {
    let scratch = Scratch::new();
    scratch.write("b.yaml", &agent_yaml("second"));
    scratch.write(
        "a/z.yml",
        &format!("{}---\n{}", agent_yaml("first"), agent_yaml("first-again")),
    );
    scratch.write("c/d/e.yaml", &agent_yaml("third"));
    scratch.write("notes.txt", "not yaml: [");
    scratch.write("c/tools.json", "{}");
    let manifests = load(std::slice::from_ref(&scratch.dir)).unwrap();
    let keys: Vec<String> = manifests
        .agents
        .iter()
        .map(purko_config::Agent::key)
        .collect();
    assert_eq!(
        keys,
        [
            "default/first",
            "default/first-again",
            "default/second",
            "default/third"
        ]
    );
    let again = manifests.agent("default/first-again").unwrap();
    assert_eq!(again.document, 2);
    assert_eq!(again.source, scratch.dir.join("a/z.yml"));
    assert!(manifests.agent("default/nobody").is_none());
}

#[test]
fn files_and_folders_load_in_the_order_given_and_a_file_given_twice_counts_once() {
    let scratch = Scratch::new();
    let one = scratch.write("one.yaml", &agent_yaml("one"));
    let two = scratch.write("dir/two.yaml", &agent_yaml("two"));
    let manifests = load(&[one.clone(), scratch.dir.join("dir"), one]).unwrap();
    let keys: Vec<String> = manifests
        .agents
        .iter()
        .map(purko_config::Agent::key)
        .collect();
    assert_eq!(keys, ["default/one", "default/two"]);
    assert_eq!(manifests.agents[1].source, two);
    assert_eq!(load(&[]).unwrap(), purko_config::Manifests::default());
}

#[test]
fn an_agent_defined_twice_is_refused_at_the_second_definition() {
    let scratch = Scratch::new();
    scratch.write("a.yaml", &agent_yaml("twin"));
    scratch.write(
        "b.yaml",
        &format!("{}---\n{}", agent_yaml("other"), agent_yaml("twin")),
    );
    let error = load(std::slice::from_ref(&scratch.dir)).unwrap_err();
    assert_eq!(
        scratch.show(&error),
        "<dir>/b.yaml:10:9: document 2: metadata.name: the agent 'default/twin' is defined twice, first in <dir>/a.yaml (document 1)"
    );
    // The same name in another namespace is another agent.
    let scratch = Scratch::new();
    scratch.write("a.yaml", &agent_yaml("twin"));
    scratch.write(
        "b.yaml",
        "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: twin, namespace: prod}\nspec: {}\n",
    );
    assert_eq!(
        load(std::slice::from_ref(&scratch.dir))
            .unwrap()
            .agents
            .len(),
        2
    );
}

#[test]
fn missing_paths_empty_folders_and_empty_files_are_clear_errors() {
    let scratch = Scratch::new();
    let error = load(&[scratch.dir.join("nope.yaml")]).unwrap_err();
    assert!(matches!(error, Error::Missing { .. }), "{error:?}");
    assert_eq!(
        scratch.show(&error),
        "<dir>/nope.yaml: no such file or folder"
    );

    scratch.write("sub/readme.md", "# no manifests here");
    let error = load(&[scratch.dir.join("sub")]).unwrap_err();
    assert_eq!(
        scratch.show(&error),
        "<dir>/sub: the folder holds no manifests (no *.yaml or *.yml file)"
    );
    assert!(error.hint().contains("*.yaml"), "{}", error.hint());

    let empty = scratch.write("empty.yaml", "");
    let error = load(&[empty]).unwrap_err();
    assert_eq!(scratch.show(&error), "<dir>/empty.yaml: the file is empty");
}

#[test]
fn an_error_in_a_folder_names_the_file() {
    let scratch = Scratch::new();
    scratch.write("a.yaml", &agent_yaml("fine"));
    scratch.write("b/tool_kinds.yaml", "tools:\n  orders: {kind: write}\n");
    let error = load(std::slice::from_ref(&scratch.dir)).unwrap_err();
    assert_eq!(
        scratch.show(&error),
        "<dir>/b/tool_kinds.yaml:1:1: the document has no apiVersion"
    );
}

fn server_yaml(name: &str, namespace: &str) -> String {
    format!(
        "apiVersion: purko.io/v1alpha1\nkind: MCPServer\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec: {{transport: stdio, command: npx}}\n"
    )
}

#[test]
fn mcp_servers_load_in_order_beside_agents_and_are_unique_by_namespace_and_name() {
    let scratch = Scratch::new();
    scratch.write(
        "a.yaml",
        &format!("{}---\n{}", server_yaml("fs", "default"), agent_yaml("fs")),
    );
    scratch.write("b/c.yaml", &server_yaml("fs", "other"));
    scratch.write("d.yaml", &server_yaml("github", "default"));
    let manifests = load(std::slice::from_ref(&scratch.dir)).unwrap();
    let keys: Vec<String> = manifests
        .mcp_servers
        .iter()
        .map(purko_config::McpServer::key)
        .collect();
    // An agent and a server may share a name: they are different kinds.
    assert_eq!(keys, ["default/fs", "other/fs", "default/github"]);
    assert_eq!(manifests.agents.len(), 1);
    let other = manifests.mcp_server("other/fs").unwrap();
    assert_eq!(other.source, scratch.dir.join("b/c.yaml"));
    assert_eq!(other.base_dir(), scratch.dir.join("b"));
    assert!(manifests.mcp_server("default/nothing").is_none());

    scratch.write(
        "e.yaml",
        &format!("{}---\n{}", agent_yaml("e"), server_yaml("fs", "other")),
    );
    let error = load(std::slice::from_ref(&scratch.dir)).unwrap_err();
    assert_eq!(
        scratch.show(&error),
        "<dir>/e.yaml:10:9: document 2: metadata.name: the MCP server 'other/fs' is defined twice, first in <dir>/b/c.yaml (document 1)"
    );
    assert_eq!(
        error.hint(),
        "give each server its own name or namespace, or remove one of the two"
    );
}
