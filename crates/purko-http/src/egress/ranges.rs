//! Which IP addresses a model may never reach, as a table of named ranges.
//!
//! Written by hand over `Ipv4Addr`/`Ipv6Addr` because std's `is_global` is still unstable. Every
//! range has a name so that a refusal can say what the address is ("169.254.169.254 is a cloud
//! metadata address"). IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4)
//! are judged by the address they embed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const METADATA: &str = "a cloud metadata address";
const PRIVATE: &str = "a private address";
const DOCUMENTATION: &str = "a documentation address";

/// IPv4 ranges, most specific first: the first match names the address.
const V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(169, 254, 169, 254), 32, METADATA),
    (Ipv4Addr::new(169, 254, 170, 2), 32, METADATA),
    (Ipv4Addr::new(100, 100, 100, 200), 32, METADATA),
    (Ipv4Addr::BROADCAST, 32, "the broadcast address"),
    (
        Ipv4Addr::UNSPECIFIED,
        8,
        "an unspecified (this-network) address",
    ),
    (Ipv4Addr::new(10, 0, 0, 0), 8, PRIVATE),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "a carrier-grade NAT address",
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "a loopback address"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "a link-local address"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, PRIVATE),
    (
        Ipv4Addr::new(192, 0, 0, 0),
        24,
        "an IETF protocol assignment address",
    ),
    (Ipv4Addr::new(192, 0, 2, 0), 24, DOCUMENTATION),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "a 6to4 relay address"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, PRIVATE),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "a benchmarking address"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, DOCUMENTATION),
    (Ipv4Addr::new(203, 0, 113, 0), 24, DOCUMENTATION),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "a multicast address"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "a reserved address"),
];

/// IPv6 ranges that do not embed an IPv4 address, most specific first.
const V6: &[(Ipv6Addr, u8, &str)] = &[
    (
        Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254),
        128,
        METADATA,
    ),
    (Ipv6Addr::UNSPECIFIED, 128, "the unspecified address"),
    (Ipv6Addr::LOCALHOST, 128, "a loopback address"),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        "a discard-only address",
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        "an IETF protocol assignment (Teredo) address",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        DOCUMENTATION,
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        DOCUMENTATION,
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "a unique-local address",
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        "a link-local address",
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        "a site-local address",
    ),
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        "a multicast address",
    ),
];

/// IPv6 prefixes that carry an IPv4 address, and where in the 128 bits it sits.
const EMBEDDINGS: &[(Ipv6Addr, u8, u32, &str)] = &[
    (
        Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0),
        96,
        0,
        "IPv4-mapped",
    ),
    (
        Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0),
        96,
        0,
        "IPv4-translated",
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0),
        96,
        0,
        "NAT64",
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        0,
        "local NAT64",
    ),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, 80, "6to4"),
    // Last: `::a.b.c.d`, after `::` and `::1` had their say in `V6`.
    (Ipv6Addr::UNSPECIFIED, 96, 0, "IPv4-compatible"),
];

/// Why `ip` must not be reached, or `None` when it is a public address.
pub fn blocked_reason(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => v4_range(v4).map(|name| format!("{v4} is {name}")),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_range(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    V4.iter()
        .find(|(net, len, _)| {
            prefix_matches(u128::from(u32::from(*net)), u128::from(bits), 32, *len)
        })
        .map(|(_, _, name)| *name)
}

fn v6_reason(ip: Ipv6Addr) -> Option<String> {
    let bits = u128::from(ip);
    if let Some((_, _, name)) = V6
        .iter()
        .find(|(net, len, _)| prefix_matches(u128::from(*net), bits, 128, *len))
    {
        return Some(format!("{ip} is {name}"));
    }
    let (_, _, shift, form) = EMBEDDINGS
        .iter()
        .find(|(net, len, _, _)| prefix_matches(u128::from(*net), bits, 128, *len))?;
    #[expect(
        clippy::cast_possible_truncation,
        reason = "keeping the 32 embedded bits is the point"
    )]
    let embedded = Ipv4Addr::from((bits >> shift) as u32);
    v4_range(embedded).map(|name| format!("{ip} is the {form} form of {embedded}, {name}"))
}

/// Whether the top `len` bits of `a` and `b` (each `width` bits wide) agree.
fn prefix_matches(a: u128, b: u128, width: u32, len: u8) -> bool {
    let len = u32::from(len);
    if len == 0 {
        return true;
    }
    let shift = width - len;
    (a >> shift) == (b >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn reason(text: &str) -> Option<String> {
        blocked_reason(text.parse().expect("an address"))
    }

    #[test]
    fn metadata_addresses_are_named_as_such() {
        assert_eq!(
            reason("169.254.169.254").as_deref(),
            Some("169.254.169.254 is a cloud metadata address")
        );
        assert_eq!(
            reason("::ffff:169.254.169.254").as_deref(),
            Some(
                "::ffff:169.254.169.254 is the IPv4-mapped form of 169.254.169.254, a cloud metadata address"
            )
        );
    }

    #[test]
    fn range_edges_are_exact() {
        for blocked in [
            "172.16.0.0",
            "172.31.255.255",
            "100.64.0.0",
            "100.127.255.255",
            "198.18.0.0",
            "198.19.255.255",
            "239.255.255.255",
            "240.0.0.1",
            "0.255.255.255",
        ] {
            assert!(reason(blocked).is_some(), "{blocked} passed");
        }
        for public in [
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "1.1.1.1",
            "8.8.8.8",
            "2606:4700::1111",
            "2a00:1450::1",
            "::ffff:8.8.8.8",
            "2002:808:808::",
        ] {
            assert_eq!(reason(public), None, "{public} was refused");
        }
    }
}
