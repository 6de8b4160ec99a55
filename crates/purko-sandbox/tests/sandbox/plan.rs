use pretty_assertions::assert_eq;
use purko_config::Language;
use purko_sandbox::{Host, Layer, Network, Plan, PlanError, Probe, Weaker};

use crate::support::config;

fn plan(writable: &[&str]) -> Result<Plan, PlanError> {
    Plan::new(
        &config(5, 1000, writable, false),
        Language::Python,
        &Host::complete(),
        Weaker::Refuse,
    )
}

#[test]
fn disabled_code_execution_is_refused() {
    let mut disabled = config(5, 1000, &[], false);
    disabled.enabled = false;
    let error = Plan::new(&disabled, Language::Bash, &Host::complete(), Weaker::Refuse);
    assert_eq!(error, Err(PlanError::Disabled));
}

#[test]
fn a_language_the_agent_has_not_enabled_is_refused() {
    let mut python_only = config(5, 1000, &[], false);
    python_only.languages = vec![Language::Python];
    let error = Plan::new(
        &python_only,
        Language::Bash,
        &Host::complete(),
        Weaker::Refuse,
    )
    .expect_err("bash is not enabled");
    assert_eq!(
        error.to_string(),
        "the agent has not enabled bash; spec.runtime.codeExecution.languages allows python"
    );
}

#[test]
fn relative_and_unnormal_writable_paths_are_refused() {
    for path in ["tmp", "./tmp", "/tmp/../etc", "/tmp/./x", "/tmp/.."] {
        assert!(
            matches!(plan(&[path]), Err(PlanError::RelativePath { .. })),
            "{path}"
        );
    }
}

#[test]
fn overlapping_writable_paths_are_refused() {
    let error = plan(&["/work", "/tmp", "/work/out"]).expect_err("they overlap");
    assert_eq!(
        error.to_string(),
        "the writable paths /work and /work/out overlap; list only one of them"
    );
    assert!(matches!(
        plan(&["/tmp", "/tmp/"]),
        Err(PlanError::Overlapping { .. })
    ));
}

#[test]
fn writable_paths_that_would_shadow_the_interpreter_are_refused() {
    for path in [
        "/",
        "/usr",
        "/usr/lib/python3",
        "/etc",
        "/lib64",
        "/dev/shm",
        "/proc/x",
        "/.purko",
    ] {
        assert!(
            matches!(plan(&[path]), Err(PlanError::Shadows { .. })),
            "{path}"
        );
    }
}

#[test]
fn good_writable_paths_are_kept_in_order() {
    let planned = plan(&["/tmp", "/work/out/", "/var/tmp"]).expect("fine paths");
    assert_eq!(
        planned.writable_paths,
        vec![
            std::path::PathBuf::from("/tmp"),
            "/work/out".into(),
            "/var/tmp".into()
        ]
    );
    assert_eq!(planned.network, Network::Denied);
}

#[test]
fn a_machine_without_user_namespaces_is_refused_even_when_weaker_is_accepted() {
    let host = Host {
        user_namespaces: Probe::Missing("user.max_user_namespaces is 0".into()),
        ..Host::complete()
    };
    for weaker in [Weaker::Refuse, Weaker::Accept] {
        let error = Plan::new(
            &config(5, 1000, &[], false),
            Language::Python,
            &host,
            weaker,
        )
        .expect_err("no user namespaces");
        assert_eq!(
            error,
            PlanError::Required {
                layer: Layer::UserNamespaces,
                reason: "user.max_user_namespaces is 0".into()
            }
        );
        assert!(error.to_string().contains("never runs code unconfined"));
    }
}

#[test]
fn a_missing_landlock_is_refused_unless_accepted() {
    let host = Host {
        landlock_abi: None,
        ..Host::complete()
    };
    let refused = Plan::new(
        &config(5, 1000, &[], false),
        Language::Python,
        &host,
        Weaker::Refuse,
    );
    assert!(matches!(
        refused,
        Err(PlanError::MissingLayer {
            layer: Layer::Landlock,
            ..
        })
    ));
    let accepted = Plan::new(
        &config(5, 1000, &[], false),
        Language::Python,
        &host,
        Weaker::Accept,
    )
    .expect("accepted");
    assert_eq!(accepted.landlock_abi, None);
    assert_eq!(accepted.missing, vec![Layer::Landlock, Layer::Cgroup]);
}

#[test]
fn a_missing_seccomp_is_refused_unless_accepted() {
    let host = Host {
        seccomp: Probe::Missing("no seccomp".into()),
        ..Host::complete()
    };
    let refused = Plan::new(
        &config(5, 1000, &[], false),
        Language::Bash,
        &host,
        Weaker::Refuse,
    );
    assert!(matches!(
        refused,
        Err(PlanError::MissingLayer {
            layer: Layer::Seccomp,
            ..
        })
    ));
    let accepted = Plan::new(
        &config(5, 1000, &[], false),
        Language::Bash,
        &host,
        Weaker::Accept,
    )
    .expect("accepted");
    assert!(!accepted.seccomp);
}

#[test]
fn zero_limits_are_refused() {
    assert_eq!(
        Plan::new(
            &config(0, 1000, &[], false),
            Language::Bash,
            &Host::complete(),
            Weaker::Refuse
        ),
        Err(PlanError::Zero {
            field: "maxExecutionSeconds"
        })
    );
}

#[test]
fn this_machine_offers_every_required_layer() {
    let host = crate::support::host();
    assert_eq!(host.user_namespaces, Probe::Present, "{host:?}");
    assert!(host.landlock_abi.is_some(), "{host:?}");
    assert_eq!(host.seccomp, Probe::Present);
}

proptest::proptest! {
    /// Whatever paths a manifest lists, a plan that exists has disjoint, absolute writable
    /// paths, none of them over or under what the interpreter needs.
    #[test]
    fn a_plan_never_holds_overlapping_or_shadowing_paths(
        paths in proptest::collection::vec("(/|)(tmp|usr|work|etc|a|\\.\\.|\\.|lib64|dev)(/(x|y|\\.\\.|lib|tmp))?/?", 0..5)
    ) {
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        if let Ok(planned) = plan(&refs) {
            let system = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/proc", "/dev", "/.purko"];
            for (i, a) in planned.writable_paths.iter().enumerate() {
                proptest::prop_assert!(a.is_absolute());
                proptest::prop_assert!(a.components().all(|c| !matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir)));
                for s in system {
                    proptest::prop_assert!(!a.starts_with(s) && !std::path::Path::new(s).starts_with(a));
                }
                for b in &planned.writable_paths[i + 1..] {
                    proptest::prop_assert!(!a.starts_with(b) && !b.starts_with(a));
                }
            }
        }
    }
}
