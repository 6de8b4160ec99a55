//! Inference examples from the specification: negation, verbs that name another tool,
//! destinations at any depth, Portuguese and the case styles of names.

use purko_guard::{DestinationMap, infer};
use purko_protocol::{Kind, KindSource, ToolAnnotations, ToolSpec};
use serde_json::json;

fn kind_of(tool: &ToolSpec) -> (Kind, KindSource) {
    let c = infer(
        tool,
        &DestinationMap::from_schema(tool.input_schema.as_ref()),
    );
    (c.kind, c.source)
}

fn plain(name: &str, description: &str) -> (Kind, KindSource) {
    kind_of(&ToolSpec::new(name, description))
}

#[test]
fn a_verb_under_negation_is_no_write_signal() {
    assert_eq!(
        plain("get_config", "Get the configuration without modifying it."),
        (Kind::Read, KindSource::Inferred)
    );
    assert_eq!(
        plain("consultar_saldo", "Consulta o saldo; não altera nada."),
        (Kind::Read, KindSource::Inferred)
    );
    assert_eq!(
        plain("get_config", "Get the configuration and modify it."),
        (Kind::Write, KindSource::Inferred)
    );
}

#[test]
fn a_verb_that_names_another_tool_is_no_write_signal() {
    assert_eq!(
        plain(
            "get_issue",
            "Get an issue. Call update_issue afterwards to change it."
        ),
        (Kind::Read, KindSource::Inferred)
    );
    assert_eq!(
        plain("get_issue", "Get an issue; use `createIssue` for new ones."),
        (Kind::Read, KindSource::Inferred)
    );
    assert_eq!(
        plain(
            "listar_boletos",
            "Lista os boletos. Para reenviar um boleto use enviar_boleto."
        ),
        (Kind::Read, KindSource::Inferred)
    );
}

#[test]
fn a_destination_argument_always_counts() {
    let mut tool = ToolSpec::new("get_page", "Get a page without sending anything.");
    tool.input_schema = Some(
        json!({"type": "object", "properties": {"options": {"type": "object", "properties": {"link": {"type": "string", "format": "uri"}}}}}),
    );
    assert_eq!(kind_of(&tool), (Kind::SendsOut, KindSource::Inferred));
    tool.input_schema =
        Some(json!({"type": "object", "properties": {"destinatário": {"type": "string"}}}));
    assert_eq!(kind_of(&tool).0, Kind::SendsOut);
}

#[test]
fn sending_verbs_in_every_case_style_and_language() {
    for name in [
        "send_message",
        "sendMessage",
        "send-message",
        "notify_team",
        "enviarBoleto",
        "encaminhar-email",
        "publicar_post",
    ] {
        assert_eq!(plain(name, "").0, Kind::SendsOut, "{name}");
    }
    assert_eq!(
        plain("report", "Posts the report to a Slack channel.").0,
        Kind::SendsOut
    );
    assert_eq!(
        plain("relatorio", "Envia o relatório ao gerente.").0,
        Kind::SendsOut
    );
}

#[test]
fn reads_need_every_signal_to_agree() {
    let mut tool = ToolSpec::new("list_pods", "List pods");
    assert_eq!(kind_of(&tool), (Kind::Read, KindSource::Inferred));
    tool.http_method = Some("POST".into());
    assert_eq!(kind_of(&tool).0, Kind::Write);
    tool.http_method = None;
    tool.annotations = Some(ToolAnnotations {
        destructive_hint: Some(true),
        ..ToolAnnotations::default()
    });
    assert_eq!(kind_of(&tool), (Kind::Write, KindSource::Annotation));
    tool.annotations = Some(ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    });
    assert_eq!(kind_of(&tool), (Kind::Read, KindSource::Inferred));
    let annotated = ToolSpec {
        annotations: tool.annotations.clone(),
        ..ToolSpec::new("pods", "")
    };
    assert_eq!(kind_of(&annotated), (Kind::Read, KindSource::Annotation));
}

#[test]
fn nothing_to_go_on_is_an_unsure_write() {
    assert_eq!(
        plain("orders", "The orders endpoint."),
        (Kind::Write, KindSource::Unsure)
    );
    assert_eq!(
        plain("reboot_and_get_status", ""),
        (Kind::Write, KindSource::Inferred)
    );
}

#[test]
fn a_write_behind_a_reading_verb_is_never_read() {
    for (name, description) in [
        (
            "get_or_create_user",
            "Get a user, creating it when missing.",
        ),
        ("fetch_and_store", "Fetch a record and store it locally."),
        (
            "list_files",
            "Lists files. Deletes temporary files older than a day.",
        ),
        ("read_file", "Reads a file and truncates it afterwards."),
        ("search", "Searches and replaces text in files."),
        ("lookup_user", "Looks up a user; if absent, provisions one."),
        ("get_token", "Get a token. Rotates the secret on each call."),
        ("list_jobs", "List jobs and purge finished ones."),
        ("get_status", "Get the status; resets the counter."),
        ("get_user", "Get a user, marking them active."),
        (
            "get_user",
            "Get a user. Side effect: marks the user as active.",
        ),
        ("get_page", "Get a page and submit the form on it."),
        (
            "describe_pod",
            "Describe a pod. Will restart it if unhealthy.",
        ),
        (
            "show_config",
            "Show the configuration, then apply pending changes.",
        ),
        (
            "consultar_pedido",
            "Consulta um pedido e o cancela se estiver vencido.",
        ),
        ("buscarCliente", "Busca um cliente e atualiza o cadastro."),
        ("find_duplicates", "Find duplicates and merge them."),
        (
            "inspect_image",
            "Inspect an image. Removes dangling layers.",
        ),
        ("list_backups", "List backups and restore the latest one."),
        ("search_and_tag", "Search items and tag the results."),
        ("reboot_and_get_status", "Get the status after a reboot."),
    ] {
        let (kind, _) = plain(name, description);
        assert_ne!(kind, Kind::Read, "{name}: {description}");
    }
}

#[test]
fn plain_reads_stay_reads() {
    for (name, description) in [
        (
            "list_issues",
            "List issues. Closing an issue is done with close_issue.",
        ),
        ("obter-saldo", "Obtém o saldo sem alterar nada."),
        ("listar_notas", "Lista as notas fiscais emitidas."),
        ("get_weather", "Returns the weather for a city."),
        ("count_rows", "Count rows in a table."),
        (
            "query_metrics",
            "Query Prometheus metrics over a time range.",
        ),
        ("list_users", "List users who were deleted recently."),
        ("view_dashboard", "View a dashboard without changing it."),
        (
            "get_file_info",
            "Retrieve metadata. Returns size, permissions, and type.",
        ),
    ] {
        assert_eq!(
            plain(name, description),
            (Kind::Read, KindSource::Inferred),
            "{name}: {description}"
        );
    }
}
