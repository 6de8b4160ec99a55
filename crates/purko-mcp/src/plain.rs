//! Kept HTTP/1.1 connections to one plain-HTTP server, each driven by the task that uses it.
//!
//! reqwest (over hyper-util's pool) runs every connection in a task of its own: a request goes
//! to that task through a channel, and the answer and each piece of its body come back the same
//! way, through reqwest's layers. For a call whose answer is a few hundred bytes that cost more
//! than the rest of Purko's path to the server: measured with a loopback packet capture on a
//! 2-core VM, ~70 µs from the answer's arrival to its headers in the caller and ~30 µs from the
//! request to the wire. Here the task that sends a request also polls the connection's I/O
//! (hyper's `http1` client connection), so the answer is read where it is awaited.
//!
//! Only plain `http://` servers: an `https://` server is across a network, where this does not
//! matter, and stays on rmcp's client.
//!
//! Invariants: a connection serves one request at a time and goes back to the pool only once
//! its answer was read to the end (a caller that stops reading early leaves the rest to a task
//! that reads it within [`DRAIN_WITHIN`], as some servers send a stream's end apart); a request
//! a kept connection could not take (the server closed it while idle) is sent on a new
//! connection, and no request is ever sent twice.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, Uri};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::registry::lock;

/// The most idle connections kept: as many as calls have run at once, up to this. A server
/// closes the ones it does not want (each is checked before use).
const MAX_IDLE: usize = 64;

/// How long the rest of an answer its caller stopped reading may take, and how large it may be,
/// for its connection to be kept.
const DRAIN_WITHIN: Duration = Duration::from_secs(1);
const MAX_DRAIN: usize = 64 * 1024;

type Driver = http1::Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// Kept connections to one server. See the module's comment.
#[derive(Debug)]
pub(crate) struct Plain {
    host: String,
    port: u16,
    /// The `Host` header of every request.
    authority: HeaderValue,
    idle: Mutex<Vec<Conn>>,
}

/// One connection: the handle that sends on it and its I/O, polled by whoever uses it.
struct Conn {
    send: http1::SendRequest<Full<Bytes>>,
    driver: Pin<Box<Driver>>,
}

impl Conn {
    /// Whether an idle connection can take a request. Its I/O is read first, so a close the
    /// server sent while it waited is seen before a request is written on it.
    fn still_open(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        self.driver.as_mut().poll(&mut cx).is_pending()
            && matches!(self.send.poll_ready(&mut cx), Poll::Ready(Ok(())))
    }
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn").finish_non_exhaustive()
    }
}

/// Why an answer's body could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    #[error("the server's answer is larger than {} MiB", .0 >> 20)]
    TooLarge(usize),
    #[error(transparent)]
    Http(#[from] hyper::Error),
}

/// Why a request got no answer.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The request was not sent: no connection could be made, or none would take it.
    NotSent(String),
    /// The connection ended after the request went out, before its answer: the server may
    /// have acted on it.
    Lost,
}

impl Plain {
    /// Connections for `url`, when it is a plain `http://` URL with a host.
    pub fn new(url: &url::Url) -> Option<Self> {
        if url.scheme() != "http" {
            return None;
        }
        let host = match url.host()? {
            url::Host::Domain(name) => name.to_owned(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        let port = url.port_or_known_default()?;
        let authority = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str()?),
            None => url.host_str()?.to_owned(),
        };
        Some(Self {
            host,
            port,
            authority: HeaderValue::from_str(&authority).ok()?,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// A request to `path` (with its query) and these headers; `Host` is added.
    pub fn request(
        &self,
        path: &Uri,
        headers: &http::HeaderMap,
        body: String,
    ) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(Bytes::from(body)));
        *request.method_mut() = http::Method::POST;
        *request.uri_mut() = path.clone();
        let mut all = headers.clone();
        all.insert(http::header::HOST, self.authority.clone());
        *request.headers_mut() = all;
        request
    }

    /// Sends `request` on a kept connection (or a new one) and returns the answer, whose body
    /// is read through the returned [`Answer`].
    pub async fn send(
        self: &Arc<Self>,
        request: Request<Full<Bytes>>,
    ) -> Result<Answer, SendError> {
        let mut request = request;
        loop {
            let (mut conn, kept) = self.connection().await?;
            let sending = conn.send.try_send_request(request);
            let Some(sent) = drive(&mut conn.driver, sending).await else {
                return Err(SendError::Lost);
            };
            match sent {
                Ok(response) => {
                    let (parts, body) = response.into_parts();
                    return Ok(Answer {
                        head: Response::from_parts(parts, ()),
                        body: Some(body),
                        conn: Some(conn),
                        ended: false,
                        read: 0,
                        max: usize::MAX,
                        plain: Arc::clone(self),
                        drain: true,
                    });
                }
                Err(mut failed) => match failed.take_message() {
                    // A kept connection the server had closed: the request never left.
                    Some(unsent) if kept => request = unsent,
                    Some(_) => return Err(SendError::NotSent(failed.error().to_string())),
                    None => return Err(SendError::Lost),
                },
            }
        }
    }

    /// An idle connection that is still open, or a new one; says whether it was kept.
    async fn connection(&self) -> Result<(Conn, bool), SendError> {
        loop {
            let Some(mut conn) = lock(&self.idle).pop() else {
                return self.connect().await.map(|conn| (conn, false));
            };
            if conn.still_open() {
                return Ok((conn, true));
            }
        }
    }

    async fn connect(&self) -> Result<Conn, SendError> {
        let not_sent = |what: &str, e: &dyn std::fmt::Display| {
            SendError::NotSent(format!("cannot {what} {}:{}: {e}", self.host, self.port))
        };
        let stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| not_sent("connect to", &e))?;
        // Requests are written whole: nothing gains from waiting to fill a segment.
        let _ = stream.set_nodelay(true);
        let (send, driver) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| not_sent("speak HTTP/1.1 with", &e))?;
        Ok(Conn {
            send,
            driver: Box::pin(driver),
        })
    }

    fn keep(&self, conn: Conn) {
        let mut idle = lock(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// Polls `work`, and the connection's I/O whenever `work` waits, until `work` is done; `None`
/// when the connection ended first and `work` could not finish without it.
async fn drive<F: Future>(driver: &mut Pin<Box<Driver>>, work: F) -> Option<F::Output> {
    let mut work = std::pin::pin!(work);
    let mut open = true;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if open && driver.as_mut().poll(cx).is_ready() {
            open = false;
        }
        match work.as_mut().poll(cx) {
            Poll::Ready(out) => Poll::Ready(Some(out)),
            Poll::Pending if open => Poll::Pending,
            Poll::Pending => Poll::Ready(None),
        }
    })
    .await
}

/// An answer whose body is read on its connection; the connection goes back to the pool when
/// this is dropped after the body ended (what is already received is read first, and the rest
/// by a task of its own).
#[derive(Debug)]
pub(crate) struct Answer {
    pub head: Response<()>,
    /// Taken only by the task that reads the rest.
    body: Option<Incoming>,
    conn: Option<Conn>,
    ended: bool,
    /// Bytes of body read so far, and the most read before [`BodyError::TooLarge`].
    read: usize,
    max: usize,
    plain: Arc<Plain>,
    /// Whether a rest still to come is read by a task when this is dropped.
    drain: bool,
}

impl Answer {
    /// The same answer, whose body ends in [`BodyError::TooLarge`] past `max` bytes.
    #[must_use]
    pub fn limit(mut self, max: usize) -> Self {
        self.max = max;
        self
    }

    /// Reads what the connection has already received, without waiting; says whether the
    /// body ended.
    fn read_ready(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..8 {
            if self.ended {
                return true;
            }
            match Pin::new(&mut *self).poll_frame(&mut cx) {
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(None) => return true,
                Poll::Ready(Some(Err(_))) | Poll::Pending => return false,
            }
        }
        false
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(None);
        };
        let mut frame = Pin::new(&mut *body).poll_frame(cx);
        if frame.is_pending()
            && let Some(conn) = &mut this.conn
        {
            if conn.driver.as_mut().poll(cx).is_ready() {
                this.conn = None;
            }
            frame = Pin::new(body).poll_frame(cx);
        }
        match frame {
            Poll::Ready(None) => {
                this.ended = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => {
                this.read = this
                    .read
                    .saturating_add(frame.data_ref().map_or(0, Bytes::len));
                if this.read > this.max {
                    // The rest of the body is not read: the connection is not kept.
                    this.conn = None;
                    return Poll::Ready(Some(Err(BodyError::TooLarge(this.max))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if self.conn.is_none() {
            return;
        }
        if self.read_ready() {
            // Let the connection see the end of the answer before it waits in the pool.
            let mut cx = Context::from_waker(Waker::noop());
            if let Some(mut conn) = self.conn.take()
                && conn.driver.as_mut().poll(&mut cx).is_pending()
            {
                self.plain.keep(conn);
            }
            return;
        }
        let (Some(conn), true, Ok(runtime)) = (
            self.conn.take(),
            self.drain,
            tokio::runtime::Handle::try_current(),
        ) else {
            return;
        };
        let mut rest = Answer {
            head: Response::new(()),
            body: self.body.take(),
            conn: Some(conn),
            ended: false,
            read: 0,
            max: MAX_DRAIN,
            plain: Arc::clone(&self.plain),
            drain: false,
        };
        runtime.spawn(async move {
            let _ = tokio::time::timeout(DRAIN_WITHIN, async {
                while let Some(Ok(_)) = rest.frame().await {}
            })
            .await;
            // Kept by its own drop if it ended.
        });
    }
}
