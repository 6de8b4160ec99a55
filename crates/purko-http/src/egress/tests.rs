use super::*;
use pretty_assertions::assert_eq;

fn guard(admitted: &[&str]) -> Egress {
    Egress::new(&admitted.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).expect("guard")
}

/// Every spelling a model might try, and a piece of the reason it must be refused with.
const REFUSED: &[(&str, &str)] = &[
    // IPv4 loopback in every spelling the WHATWG parser accepts.
    ("http://127.0.0.1/", "127.0.0.1 is a loopback address"),
    ("http://2130706433/", "127.0.0.1 is a loopback address"),
    ("http://0177.0.0.1/", "127.0.0.1 is a loopback address"),
    ("http://0x7f.1/", "127.0.0.1 is a loopback address"),
    ("http://0x7f000001/", "127.0.0.1 is a loopback address"),
    ("http://127.1/", "127.0.0.1 is a loopback address"),
    ("http://127.0.1/", "127.0.0.1 is a loopback address"),
    ("http://0177.0x0.0.01/", "127.0.0.1 is a loopback address"),
    ("http://127.0.0.1./", "127.0.0.1 is a loopback address"),
    (
        "http://127.255.255.254:8080/x",
        "127.255.255.254 is a loopback address",
    ),
    ("HTTP://127.0.0.1/", "loopback"),
    ("  http://127.0.0.1/  ", "loopback"),
    ("http:\\\\127.0.0.1\\x", "loopback"),
    // Unspecified and broadcast.
    ("http://0/", "0.0.0.0 is an unspecified"),
    ("http://0.0.0.0/", "0.0.0.0 is an unspecified"),
    ("http://[::]/", ":: is the unspecified address"),
    ("http://255.255.255.255/", "the broadcast address"),
    ("http://4294967295/", "the broadcast address"),
    // Cloud metadata.
    (
        "http://169.254.169.254/latest/meta-data/",
        "169.254.169.254 is a cloud metadata address",
    ),
    (
        "http://2852039166/",
        "169.254.169.254 is a cloud metadata address",
    ),
    (
        "http://0xa9.0xfe.0xa9.0xfe/",
        "169.254.169.254 is a cloud metadata address",
    ),
    (
        "http://0251.0376.0251.0376/",
        "169.254.169.254 is a cloud metadata address",
    ),
    (
        "http://169.254.43518/",
        "169.254.169.254 is a cloud metadata address",
    ),
    (
        "http://169.254.170.2/v2/credentials",
        "169.254.170.2 is a cloud metadata address",
    ),
    (
        "http://100.100.100.200/latest/meta-data/",
        "100.100.100.200 is a cloud metadata address",
    ),
    (
        "http://[fd00:ec2::254]/",
        "fd00:ec2::254 is a cloud metadata address",
    ),
    (
        "http://metadata/computeMetadata/v1/",
        "metadata is a cloud metadata host name",
    ),
    (
        "http://metadata.google.internal/",
        "metadata.google.internal is a cloud metadata host name",
    ),
    (
        "http://METADATA.Google.Internal./",
        "metadata.google.internal is a cloud metadata host name",
    ),
    ("http://metadata.goog/", "cloud metadata host name"),
    ("http://instance-data/", "cloud metadata host name"),
    (
        "http://Instance-Data.EC2.Internal../",
        "cloud metadata host name",
    ),
    // Private, link-local, CGNAT, reserved, documentation, benchmarking, multicast.
    ("http://10.0.0.1/", "10.0.0.1 is a private address"),
    ("http://172.16.0.1/", "172.16.0.1 is a private address"),
    ("http://172.31.255.255/", "a private address"),
    ("http://192.168.1.1/", "192.168.1.1 is a private address"),
    ("http://3232235777/", "192.168.1.1 is a private address"),
    ("http://169.254.1.1/", "a link-local address"),
    (
        "http://100.64.0.1/",
        "100.64.0.1 is a carrier-grade NAT address",
    ),
    ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://240.0.0.1/", "a reserved address"),
    ("http://192.0.2.1/", "a documentation address"),
    ("http://198.51.100.7/", "a documentation address"),
    ("http://203.0.113.9/", "a documentation address"),
    ("http://198.18.0.1/", "a benchmarking address"),
    ("http://224.0.0.1/", "a multicast address"),
    // IPv6 forms.
    ("http://[::1]/", "::1 is a loopback address"),
    ("http://[0:0:0:0:0:0:0:1]/", "::1 is a loopback address"),
    (
        "http://[::ffff:127.0.0.1]/",
        "IPv4-mapped form of 127.0.0.1, a loopback address",
    ),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"),
    (
        "http://[::ffff:169.254.169.254]/",
        "IPv4-mapped form of 169.254.169.254, a cloud metadata address",
    ),
    ("http://[::ffff:10.0.0.1]/", "a private address"),
    ("http://[::127.0.0.1]/", "IPv4-compatible form of 127.0.0.1"),
    (
        "http://[64:ff9b::a9fe:a9fe]/",
        "NAT64 form of 169.254.169.254, a cloud metadata address",
    ),
    ("http://[64:ff9b::127.0.0.1]/", "NAT64 form of 127.0.0.1"),
    (
        "http://[2002:a9fe:a9fe::]/",
        "6to4 form of 169.254.169.254, a cloud metadata address",
    ),
    ("http://[2002:7f00:1::1]/", "6to4 form of 127.0.0.1"),
    ("http://[fe80::1]/", "a link-local address"),
    ("http://[fe80::1%25eth0]/", "not a valid absolute URL"),
    ("http://[fc00::1]/", "a unique-local address"),
    ("http://[fd12:3456::1]/", "a unique-local address"),
    ("http://[fec0::1]/", "a site-local address"),
    ("http://[ff02::1]/", "a multicast address"),
    ("http://[2001:db8::1]/", "a documentation address"),
    ("http://[2001::1]/", "Teredo"),
    // Names for this machine.
    ("http://localhost/", "localhost is a name for this machine"),
    ("http://LOCALHOST./", "localhost is a name for this machine"),
    (
        "http://foo.localhost/",
        "foo.localhost is a name for this machine",
    ),
    (
        "http://a.b.Localhost./admin",
        "a.b.localhost is a name for this machine",
    ),
    (
        "http://localhost:8080/",
        "localhost is a name for this machine",
    ),
    // Schemes.
    (
        "file:///etc/passwd",
        "only http and https URLs may be fetched, not file:",
    ),
    ("gopher://127.0.0.1:6379/_INFO", "not gopher:"),
    ("ftp://example.com/", "not ftp:"),
    ("javascript:alert(1)", "not javascript:"),
    ("dict://127.0.0.1:11211/stat", "not dict:"),
    ("ws://example.com/", "not ws:"),
    ("data:text/plain,hi", "not data:"),
    // User information, in every shape.
    ("http://a@b/", "user information"),
    ("http://example.com@127.0.0.1/", "user information"),
    ("http://user:pass@example.com/", "user information"),
    ("http://:@example.com/", "user information"),
    ("http://@example.com/", "user information"),
    ("http://a:@example.com/", "user information"),
    ("http://example.com%40evil.com/", "not a valid absolute URL"),
    ("http:\\\\user@example.com/", "user information"),
    ("http:user@example.com", "user information"),
    ("https://evil.com\\@example.com/", "user information"),
    // Not URLs.
    ("", "not a valid absolute URL"),
    ("example.com/x", "not a valid absolute URL"),
    ("//example.com/", "not a valid absolute URL"),
    ("http://1.2.3.4.5/", "not a valid absolute URL"),
    ("http://256.0.0.1/", "not a valid absolute URL"),
];

const PASSED: &[&str] = &[
    "http://93.184.216.34/",
    "https://[2606:4700::1111]/",
    "https://example.com/path?q=1#frag",
    "https://api.example.com:8443/v1",
    "http://1.1.1.1/",
    "http://[::ffff:8.8.8.8]/",
    "http://172.32.0.1/",
    "http://100.128.0.1/",
    "https://localhost.example.com/",
    "https://metadata.example.com/",
    "http://example.com/@user",
    "http://example.com/?next=a@b",
];

#[test]
fn ssrf_spellings_are_refused_with_a_reason() {
    let guard = guard(&[]);
    let mut failures = Vec::new();
    for (url, expected) in REFUSED {
        match guard.check(url) {
            Ok(parsed) => failures.push(format!("{url:?} passed as {parsed}")),
            Err(blocked) if !blocked.reason.contains(expected) => {
                failures.push(format!("{url:?}: {:?} lacks {expected:?}", blocked.reason));
            }
            Err(_) => {}
        }
    }
    assert_eq!(failures, Vec::<String>::new());
    assert!(REFUSED.len() >= 40);
}

#[test]
fn public_addresses_pass_the_check() {
    let guard = guard(&[]);
    for url in PASSED {
        assert!(
            guard.check(url).is_ok(),
            "{url} was refused: {:?}",
            guard.check(url)
        );
    }
}

#[test]
fn a_refusal_never_repeats_the_user_information() {
    let guard = guard(&[]);
    for url in [
        "http://user:hunter2@127.0.0.1/",
        "http:\\\\user:hunter2@example.com/",
        "http://user:hunter2@[::1/",
    ] {
        let blocked = guard.check(url).expect_err("refused");
        assert!(!blocked.url.contains("hunter2"), "{blocked:?}");
        assert!(!blocked.to_string().contains("hunter2"), "{blocked}");
    }
    assert_eq!(
        guard
            .check("http://169.254.169.254/latest")
            .expect_err("refused")
            .to_string(),
        "Purko refused to send a request to http://169.254.169.254/latest: \
         169.254.169.254 is a cloud metadata address."
    );
}

#[test]
fn admitted_destinations_skip_the_range_check_but_not_scheme_or_userinfo() {
    let guard = guard(&[
        "127.0.0.1:8080",
        "10.1.2.3",
        "https://[::1]:9000/hooks/*",
        "*.corp.example",
    ]);
    assert!(guard.check("http://127.0.0.1:8080/x").is_ok());
    assert!(guard.check("http://127.1:8080/x").is_ok());
    assert!(guard.check("http://127.0.0.1:8081/x").is_err());
    assert!(guard.check("http://10.1.2.3:5000/").is_ok());
    assert!(guard.check("https://[::1]:9000/hooks/a").is_ok());
    assert!(guard.check("https://[::1]:9000/other").is_err());
    assert!(guard.check("http://u:p@127.0.0.1:8080/").is_err());
    assert!(guard.check("ftp://127.0.0.1:8080/").is_err());
    assert!(
        guard.check("http://localhost:8080/").is_err(),
        "the address is admitted, not the name"
    );
}

#[test]
fn wildcards_never_admit_metadata_names_but_exact_names_do() {
    let wild = guard(&["*.google.internal", "*.localhost"]);
    assert!(wild.check("http://metadata.google.internal/").is_err());
    assert!(wild.check("http://foo.localhost/").is_err());
    let exact = guard(&["localhost:3000"]);
    assert!(exact.check("http://localhost:3000/").is_ok());
}

#[tokio::test]
async fn every_resolved_address_is_checked() {
    // `localhost` is in every hosts file, so this needs no DNS server.
    let err = resolve_name("localhost", 80, false, true)
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, ResolveError::Blocked(reason) if reason.starts_with("localhost resolves to a blocked address")),
        "{err}"
    );
    let admitted = resolve_name("localhost", 80, true, true)
        .await
        .expect("admitted");
    assert!(admitted.iter().all(|a| a.ip().is_loopback()));
}

#[tokio::test]
async fn resolve_refuses_names_for_this_machine_and_passes_literals() {
    let guard = guard(&[]);
    let url = Url::parse("http://foo.localhost/").expect("url");
    assert!(guard.resolve(&url).await.is_err());
    let url = Url::parse("https://[2606:4700::1111]:8443/").expect("url");
    assert_eq!(
        guard.resolve(&url).await.expect("a literal"),
        vec![
            "[2606:4700::1111]:8443"
                .parse::<SocketAddr>()
                .expect("addr")
        ]
    );
}
