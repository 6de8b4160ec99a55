//! Real HTTP on loopback: an axum server that records every request, and the API tool calling it.

mod server;

use std::time::Duration;

use pretty_assertions::assert_eq;
use purko_http::{ApiClient, ApiRequest, ApiTool, Auth, AuthScheme, Egress, Method, Secret};
use purko_protocol::{Code, Observation, Status};
use serde_json::{Value, json};
use server::Server;

const SECRET: &str = "s3cr3t-T0KEN-value";

fn tool(url: impl Into<String>, method: Method) -> ApiTool {
    ApiTool {
        name: "fetch".into(),
        url: url.into(),
        method,
        headers: vec![("X-Static".into(), "yes".into())],
        timeout: Duration::from_secs(5),
        auth: None,
    }
}

fn with_auth(mut tool: ApiTool, scheme: AuthScheme, header: Option<&str>, secret: &str) -> ApiTool {
    tool.auth = Some(Auth {
        scheme,
        header: header.map(str::to_owned),
        credential: Secret::new(secret),
    });
    tool
}

fn egress(admitted: &[String]) -> Egress {
    Egress::new(admitted).expect("egress")
}

async fn call(tool: &ApiTool, arguments: Value, egress: &Egress) -> Observation {
    call_with(tool, arguments, egress, None, 64 * 1024).await
}

async fn call_with(
    tool: &ApiTool,
    arguments: Value,
    egress: &Egress,
    key: Option<&str>,
    max: usize,
) -> Observation {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let client = ApiClient::new().expect("client");
    client
        .call(ApiRequest {
            tool,
            arguments: &arguments,
            idempotency_key: key,
            egress,
            max_body_bytes: max,
        })
        .await
}

fn code(o: &Observation) -> Option<Code> {
    o.code
}

#[tokio::test]
async fn get_and_delete_send_arguments_as_query_and_the_rest_as_json_body() {
    let server = Server::start().await;
    let args = json!({"q": "rust lang", "n": 3, "flag": true, "tags": ["a", "b"], "filter": {"x": 1}, "none": null});
    for method in [Method::Get, Method::Delete] {
        let o = call(
            &tool(server.url("/echo"), method),
            args.clone(),
            &egress(&[]),
        )
        .await;
        assert_eq!(o.status, Status::Success, "{o:?}");
        let seen = server.last();
        assert_eq!(seen.method, method.as_str());
        assert_eq!(
            seen.query.as_deref(),
            Some("filter=%7B%22x%22%3A1%7D&flag=true&n=3&q=rust+lang&tags=a&tags=b")
        );
        assert_eq!(seen.body, "");
    }
    for method in [Method::Post, Method::Put, Method::Patch] {
        let o = call(
            &tool(server.url("/echo"), method),
            args.clone(),
            &egress(&[]),
        )
        .await;
        assert_eq!(o.status, Status::Success, "{o:?}");
        let seen = server.last();
        assert_eq!(seen.method, method.as_str());
        assert_eq!(seen.query, None);
        assert_eq!(
            serde_json::from_str::<Value>(&seen.body).expect("json body"),
            args
        );
        assert_eq!(
            seen.header("content-type").as_deref(),
            Some("application/json")
        );
        assert_eq!(seen.header("x-static").as_deref(), Some("yes"));
    }
}

#[tokio::test]
async fn a_success_carries_status_and_parsed_json() {
    let server = Server::start().await;
    let o = call(
        &tool(server.url("/echo"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(
        o,
        Observation::success(json!({"status": 200, "body": {"ok": true}}))
    );
    let o = call(
        &tool(server.url("/text"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(
        o,
        Observation::success(json!({"status": 200, "body": "plain words"}))
    );
}

#[tokio::test]
async fn placeholders_are_one_encoded_path_segment_and_not_sent_again() {
    let server = Server::start().await;
    let t = tool(server.url("/users/{id}/posts"), Method::Get);
    for (id, path) in [
        ("42", "/users/42/posts"),
        ("../admin", "/users/..%2Fadmin/posts"),
        ("a/b", "/users/a%2Fb/posts"),
        ("x?y=1", "/users/x%3Fy%3D1/posts"),
        ("x#f", "/users/x%23f/posts"),
        ("@evil.com", "/users/%40evil.com/posts"),
        ("a\\b c%2F", "/users/a%5Cb%20c%252F/posts"),
        ("...", "/users/.../posts"),
        ("%2e%2E", "/users/%252e%252E/posts"),
    ] {
        let o = call(&t, json!({"id": id, "page": 2}), &egress(&[])).await;
        assert_eq!(o.status, Status::Success, "{id}: {o:?}");
        let seen = server.last();
        assert_eq!(
            (id, seen.path.as_str(), seen.query.as_deref()),
            (id, path, Some("page=2"))
        );
    }
    let host = tool(server.url("/{id}"), Method::Get);
    let o = call(&host, json!({"id": "@127.0.0.2:1/x"}), &egress(&[])).await;
    assert_eq!(server.last().path, "/%40127.0.0.2%3A1%2Fx", "{o:?}");
}

#[tokio::test]
async fn dot_segments_and_missing_placeholders_are_refused_before_sending() {
    let server = Server::start().await;
    let t = tool(server.url("/users/{id}/posts"), Method::Get);
    for id in [".", ".."] {
        let o = call(&t, json!({"id": id}), &egress(&[])).await;
        assert_eq!(code(&o), Some(Code::ValidationFailed), "{id}: {o:?}");
        assert!(
            o.message.as_deref().unwrap_or_default().contains("'id'"),
            "{o:?}"
        );
    }
    let o = call(&t, json!({"page": 1}), &egress(&[])).await;
    assert_eq!(code(&o), Some(Code::ValidationFailed));
    assert_eq!(
        o.message.as_deref(),
        Some("argument 'id' is missing; fetch needs it to build its URL")
    );
    assert_eq!(server.count(), 0);
}

#[tokio::test]
async fn every_auth_scheme_is_sent_as_designed() {
    let server = Server::start().await;
    let basic = "YWxpY2U6b3BlbiBzZXNhbWU="; // base64("alice:open sesame")
    for (scheme, header, secret, seen_header, expected) in [
        (
            AuthScheme::Bearer,
            None,
            SECRET,
            "authorization",
            format!("Bearer {SECRET}"),
        ),
        (
            AuthScheme::Token,
            None,
            SECRET,
            "authorization",
            format!("Token {SECRET}"),
        ),
        (
            AuthScheme::Basic,
            None,
            "alice:open sesame",
            "authorization",
            format!("Basic {basic}"),
        ),
        (
            AuthScheme::ApiKey,
            None,
            SECRET,
            "authorization",
            format!("ApiKey {SECRET}"),
        ),
        (
            AuthScheme::ApiKey,
            Some("X-Api-Key"),
            SECRET,
            "x-api-key",
            SECRET.to_owned(),
        ),
        (
            AuthScheme::Bearer,
            Some("X-Auth"),
            SECRET,
            "x-auth",
            format!("Bearer {SECRET}"),
        ),
    ] {
        let t = with_auth(
            tool(server.url("/echo"), Method::Get),
            scheme,
            header,
            secret,
        );
        let o = call(&t, json!({}), &egress(&[])).await;
        assert_eq!(o.status, Status::Success, "{o:?}");
        assert_eq!(
            server.last().header(seen_header),
            Some(expected),
            "{scheme:?} {header:?}"
        );
    }
}

#[tokio::test]
async fn the_credential_is_redacted_when_the_upstream_echoes_it() {
    let server = Server::start().await;
    for (scheme, secret) in [
        (AuthScheme::Bearer, SECRET),
        (AuthScheme::Basic, "alice:open-sesame"),
    ] {
        for path in [
            "/echo-auth",
            "/echo-auth-text",
            "/echo-auth-401",
            "/echo-auth-500",
        ] {
            let t = with_auth(tool(server.url(path), Method::Post), scheme, None, secret);
            let o = call(&t, json!({}), &egress(&[])).await;
            let shown = serde_json::to_string(&o).expect("serializes");
            assert!(!shown.contains(secret), "{path}: {shown}");
            assert!(!shown.contains("open-sesame"), "{path}: {shown}");
            assert!(
                !shown.contains("YWxpY2U6b3Blbi1zZXNhbWU="),
                "{path}: {shown}"
            );
            assert!(shown.contains("[redacted]"), "{path}: {shown}");
        }
    }
}

#[tokio::test]
async fn the_idempotency_key_travels_as_a_header() {
    let server = Server::start().await;
    let t = tool(server.url("/echo"), Method::Post);
    let o = call_with(&t, json!({"a": 1}), &egress(&[]), Some("k-123"), 1024).await;
    assert!(o.is_success(), "{o:?}");
    assert_eq!(
        server.last().header("idempotency-key").as_deref(),
        Some("k-123")
    );
}

#[tokio::test]
async fn rate_limits_report_the_cooldown_in_seconds_or_from_a_date() {
    let server = Server::start().await;
    let o = call(
        &tool(server.url("/limited"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::RateLimitExceeded));
    assert_eq!(o.retry_after_seconds, Some(7));
    assert_eq!(
        o.remediation.as_deref(),
        Some("wait 7 seconds before calling fetch again")
    );

    let o = call(
        &tool(server.url("/limited-date"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::RateLimitExceeded));
    let seconds = o.retry_after_seconds.expect("a cooldown");
    assert!((100..=120).contains(&seconds), "{seconds}");
}

#[tokio::test]
async fn server_errors_and_client_errors_are_upstream_errors_with_a_snippet() {
    let server = Server::start().await;
    let o = call(
        &tool(server.url("/boom"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::UpstreamError));
    assert_eq!(
        o.message.as_deref(),
        Some("fetch failed upstream with HTTP 500: internal failure: database down")
    );

    let o = call(
        &tool(server.url("/missing"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::UpstreamError));
    assert_eq!(
        o.message.as_deref(),
        Some("fetch was refused upstream with HTTP 404: no such user")
    );
    assert!(
        o.remediation
            .as_deref()
            .unwrap_or_default()
            .contains("corrected values")
    );
}

#[tokio::test]
async fn an_upstream_that_hangs_past_the_timeout_is_a_timeout() {
    let server = Server::start().await;
    let half = server::half_answer().await;
    for url in [server.url("/hang"), format!("http://127.0.0.1:{half}/x")] {
        let mut t = tool(url.clone(), Method::Get);
        t.timeout = Duration::from_millis(300);
        let o = call(&t, json!({}), &egress(&[])).await;
        assert_eq!(code(&o), Some(Code::UpstreamTimeout), "{url}: {o:?}");
    }
}

#[tokio::test]
async fn a_refused_connection_is_unavailable_in_plain_words() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let o = call(
        &tool(format!("http://127.0.0.1:{port}/x"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::UpstreamUnavailable), "{o:?}");
    assert_eq!(
        o.message,
        Some(format!(
            "fetch could not reach its service: http://127.0.0.1:{port} refused the connection"
        ))
    );
}

#[tokio::test]
async fn a_garbage_json_body_is_text_with_a_note() {
    let server = Server::start().await;
    let o = call(
        &tool(server.url("/garbage"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert!(o.is_success(), "{o:?}");
    let body = o.observation.expect("observation");
    assert_eq!(body["body"], json!("{\"not\": json"));
    assert!(
        body["note"]
            .as_str()
            .unwrap_or_default()
            .contains("did not parse")
    );
}

#[tokio::test]
async fn a_long_body_is_cut_and_marked() {
    let server = Server::start().await;
    let o = call_with(
        &tool(server.url("/big"), Method::Get),
        json!({}),
        &egress(&[]),
        None,
        100,
    )
    .await;
    assert!(o.is_success() && o.truncated, "{o:?}");
    assert_eq!(
        o.observation.expect("observation")["body"],
        json!("a".repeat(100))
    );
}

#[tokio::test]
async fn a_whole_url_tool_reaches_loopback_only_when_admitted() {
    let server = Server::start().await;
    let t = tool("{url}", Method::Get);
    let args = json!({"url": server.url("/echo"), "q": "x"});
    let o = call(&t, args.clone(), &egress(&[])).await;
    assert_eq!(code(&o), Some(Code::EgressBlocked), "{o:?}");
    assert!(
        o.message
            .as_deref()
            .unwrap_or_default()
            .contains("127.0.0.1 is a loopback address"),
        "{o:?}"
    );
    assert_eq!(server.count(), 0);

    let o = call(&t, args, &egress(&[server.authority()])).await;
    assert!(o.is_success(), "{o:?}");
    assert_eq!(server.last().query.as_deref(), Some("q=x"));

    let o = call(&t, json!({"url": 42}), &egress(&[])).await;
    assert_eq!(code(&o), Some(Code::ValidationFailed));
}

#[tokio::test]
async fn names_for_this_machine_are_refused() {
    let server = Server::start().await;
    let t = tool("{url}", Method::Get);
    let port = server.port();
    for url in [
        format!("http://localhost:{port}/echo"),
        format!("http://foo.localhost:{port}/echo"),
    ] {
        let o = call(&t, json!({"url": url}), &egress(&[])).await;
        assert_eq!(code(&o), Some(Code::EgressBlocked), "{url}: {o:?}");
    }
    // Admitted by name on another port: the guarded resolver still refuses this port.
    let o = call(
        &t,
        json!({"url": format!("http://localhost:{port}/echo")}),
        &egress(&["localhost:1".into()]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::EgressBlocked), "{o:?}");
    assert!(
        o.message
            .as_deref()
            .unwrap_or_default()
            .contains("localhost is a name for this machine"),
        "{o:?}"
    );
    assert_eq!(server.count(), 0);
    // Admitted by name on this port: resolved and reached.
    let o = call(
        &t,
        json!({"url": format!("http://localhost:{port}/echo")}),
        &egress(&[format!("localhost:{port}")]),
    )
    .await;
    assert!(o.is_success(), "{o:?}");
}

#[tokio::test]
async fn a_redirect_to_the_metadata_address_is_blocked() {
    let server = Server::start().await;
    for t in [
        tool(server.url("/redirect-metadata"), Method::Get),
        tool("{url}", Method::Get),
    ] {
        let o = call(
            &t,
            json!({"url": server.url("/redirect-metadata")}),
            &egress(&[server.authority()]),
        )
        .await;
        assert_eq!(code(&o), Some(Code::EgressBlocked), "{o:?}");
        assert_eq!(
            o.message.as_deref(),
            Some(
                "Purko refused to send a request to http://169.254.169.254/latest/meta-data/: the service \
                 redirected there, and 169.254.169.254 is a cloud metadata address."
            )
        );
    }
}

#[tokio::test]
async fn a_redirect_to_another_origin_drops_the_credential() {
    let first = Server::start().await;
    let second = Server::start().await;
    let target = second.url("/echo");
    for header in [None, Some("X-Api-Key")] {
        let t = with_auth(
            tool(first.url("/redirect"), Method::Get),
            AuthScheme::ApiKey,
            header,
            SECRET,
        );
        let o = call_with(
            &t,
            json!({"to": target}),
            &egress(&[second.authority()]),
            Some("k-1"),
            1024,
        )
        .await;
        assert!(o.is_success(), "{o:?}");
        let seen = second.last();
        assert_eq!(seen.path, "/echo");
        assert_eq!(
            (seen.header("authorization"), seen.header("x-api-key")),
            (None, None)
        );
        assert_eq!(seen.header("idempotency-key").as_deref(), Some("k-1"));
    }
    // Not admitted: the second loopback server is out of reach from a redirect.
    let t = tool(first.url("/redirect"), Method::Get);
    let before = second.count();
    let o = call(&t, json!({"to": target}), &egress(&[])).await;
    assert_eq!(code(&o), Some(Code::EgressBlocked), "{o:?}");
    assert_eq!(second.count(), before);
}

#[tokio::test]
async fn redirects_change_method_as_browsers_do() {
    let server = Server::start().await;
    let t = with_auth(
        tool(server.url("/redirect"), Method::Post),
        AuthScheme::Bearer,
        None,
        SECRET,
    );
    for (status, method, body) in [
        ("303", "GET", ""),
        ("302", "GET", ""),
        ("301", "GET", ""),
        ("307", "POST", r#"{"code":"307","to":"/landing"}"#),
        ("308", "POST", r#"{"code":"308","to":"/landing"}"#),
    ] {
        let o = call(&t, json!({"to": "/landing", "code": status}), &egress(&[])).await;
        assert!(o.is_success(), "{o:?}");
        let seen = server.last();
        assert_eq!(
            (
                status,
                seen.path.as_str(),
                seen.method.as_str(),
                seen.body.as_str()
            ),
            (status, "/landing", method, body)
        );
        assert_eq!(
            seen.header("authorization"),
            Some(format!("Bearer {SECRET}")),
            "same origin keeps it"
        );
    }
}

#[tokio::test]
async fn endless_redirects_stop_after_five_hops() {
    let server = Server::start().await;
    let o = call(
        &tool(server.url("/loop"), Method::Get),
        json!({}),
        &egress(&[]),
    )
    .await;
    assert_eq!(code(&o), Some(Code::UpstreamError), "{o:?}");
    assert_eq!(server.count(), 6);
}
