//! A loopback axum server that records method, path, query, headers and body of every request
//! and answers by path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::to_bytes;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).cloned()
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

pub struct Server {
    port: u16,
    log: Log,
}

impl Server {
    pub async fn start() -> Self {
        let log = Log::default();
        let app = Router::new().fallback(answer).with_state(log.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
        Self { port, log }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`, as an allow-list pattern.
    pub fn authority(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn last(&self) -> Seen {
        self.log
            .lock()
            .expect("log")
            .last()
            .cloned()
            .expect("a request was recorded")
    }

    pub fn count(&self) -> usize {
        self.log.lock().expect("log").len()
    }
}

async fn answer(State(log): State<Log>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, 1 << 20).await.expect("body");
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    log.lock().expect("log").push(seen.clone());
    let auth = seen.header("authorization").unwrap_or_default();
    let json_type = [(header::CONTENT_TYPE, "application/json")];
    match seen.path.as_str() {
        "/text" => "plain words".into_response(),
        "/echo-auth" => {
            axum::Json(json!({"you_sent": auth, "nested": [{"again": auth}]})).into_response()
        }
        "/echo-auth-text" => format!("Authorization: {auth}").into_response(),
        "/echo-auth-401" => {
            (StatusCode::UNAUTHORIZED, format!("bad credential {auth}")).into_response()
        }
        "/echo-auth-500" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("crashed on {auth}"),
        )
            .into_response(),
        "/limited" => (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "7")],
            "slow down",
        )
            .into_response(),
        "/limited-date" => {
            let at = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("clock")
                .as_secs()
                + 120;
            (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, http_date(at))],
            )
                .into_response()
        }
        "/boom" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal failure:\n  database down",
        )
            .into_response(),
        "/missing" => (StatusCode::NOT_FOUND, "no such user").into_response(),
        "/hang" => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            "late".into_response()
        }
        "/garbage" => (json_type, "{\"not\": json").into_response(),
        "/big" => "a".repeat(10_000).into_response(),
        "/redirect-metadata" => redirect(302, "http://169.254.169.254/latest/meta-data/"),
        "/redirect" => {
            let args = arguments(&seen);
            let to = args
                .get("to")
                .and_then(Value::as_str)
                .unwrap_or("/echo")
                .to_owned();
            let code = args
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or("302")
                .parse()
                .expect("a code");
            redirect(code, &to)
        }
        "/loop" => redirect(302, "/loop"),
        _ => axum::Json(json!({"ok": true})).into_response(),
    }
}

fn redirect(code: u16, to: &str) -> Response {
    (
        StatusCode::from_u16(code).expect("status"),
        [(header::LOCATION, to.to_owned())],
    )
        .into_response()
}

/// The call's arguments, from the query or the JSON body.
fn arguments(seen: &Seen) -> HashMap<String, Value> {
    if !seen.body.is_empty() {
        return serde_json::from_str(&seen.body).expect("json body");
    }
    let query = seen.query.clone().unwrap_or_default();
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), Value::String(v.into_owned())))
        .collect()
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` for seconds since the epoch.
fn http_date(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).expect("days");
    let rest = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        [usize::try_from(days % 7).expect("weekday")];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[usize::try_from(month - 1).expect("month")],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// A raw server that sends the head and the start of a body, then never the rest.
pub async fn half_answer() -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"partial\": ";
                let _ = socket.write_all(head.as_bytes()).await;
                tokio::time::sleep(Duration::from_secs(10)).await;
            });
        }
    });
    port
}
