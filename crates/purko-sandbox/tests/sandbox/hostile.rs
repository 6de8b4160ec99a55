//! Hostile programs: each must stay inside, and the outcome must say which limit stopped it.

use pretty_assertions::assert_eq;
use purko_config::Language;
use purko_sandbox::Limit;

use crate::support::{bash, config, plan, python, run};

#[tokio::test(flavor = "multi_thread")]
async fn a_python_fork_bomb_hits_the_process_limit() {
    let outcome = run(
        Language::Python,
        &config(5, 10_000, &[], false),
        "import os\nwhile True:\n    os.fork()\n",
    )
    .await;
    assert!(
        matches!(outcome.limit, Some(Limit::Processes | Limit::WallClock)),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bash_fork_bomb_is_contained() {
    // The script outlives the bomb's first generation, so the bomb keeps forking until the
    // process limit refuses it, and the deadline ends everything.
    let outcome = run(
        Language::Bash,
        &config(3, 10_000, &[], false),
        ":(){ :|:& };:\nsleep 10\n",
    )
    .await;
    assert!(
        matches!(outcome.limit, Some(Limit::Processes | Limit::WallClock)),
        "{outcome:?}"
    );
    assert!(
        outcome.stderr.contains("Resource temporarily unavailable"),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_memory_balloon_hits_the_memory_limit() {
    let outcome = python("chunks = []\nwhile True:\n    chunks.append(bytearray(10 ** 7))\n").await;
    assert_eq!(outcome.limit, Some(Limit::Memory), "{outcome:?}");
    assert!(outcome.stderr.contains("MemoryError"));
    let one_big = python("x = bytearray(1 << 31)").await;
    assert_eq!(one_big.limit, Some(Limit::Memory), "{one_big:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sleeping_loop_is_killed_at_the_deadline() {
    let outcome = run(
        Language::Python,
        &config(2, 10_000, &[], false),
        "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.1)\n",
    )
    .await;
    assert_eq!(outcome.limit, Some(Limit::WallClock), "{outcome:?}");
    assert_eq!(outcome.signal.as_deref(), Some("SIGKILL"));
    assert_eq!(outcome.stdout, "started\n");
    assert!(outcome.peak_memory_bytes.is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_busy_loop_is_stopped_by_the_cpu_or_wall_clock_limit() {
    let outcome = run(
        Language::Python,
        &config(1, 10_000, &[], false),
        "while True:\n    pass\n",
    )
    .await;
    assert!(
        matches!(outcome.limit, Some(Limit::WallClock | Limit::CpuTime)),
        "{outcome:?}"
    );
    assert!(outcome.exit_code.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cpu_limit_is_reported_as_such() {
    let mut planned = plan(Language::Bash, &config(10, 10_000, &[], false));
    planned.limits.cpu_seconds = 1;
    let outcome = purko_sandbox::run(&planned, "while :; do :; done", None)
        .await
        .expect("runs");
    assert_eq!(outcome.limit, Some(Limit::CpuTime), "{outcome:?}");
    assert_eq!(outcome.signal.as_deref(), Some("SIGXCPU"));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_output_flood_is_cut_with_a_marker_and_stopped() {
    let outcome = run(
        Language::Python,
        &config(10, 1000, &[], false),
        "while True:\n    print('x' * 1000)\n",
    )
    .await;
    assert!(outcome.truncated, "{outcome:?}");
    assert_eq!(outcome.limit, Some(Limit::Output));
    assert!(
        outcome
            .stdout
            .ends_with("\n[purko: output truncated at 1000 bytes]\n")
    );
    assert!(outcome.stdout.len() < 1100);
}

#[tokio::test(flavor = "multi_thread")]
async fn writing_outside_the_writable_paths_fails() {
    let outcome = python(
        "for path in ['/etc/evil', '/usr/lib/evil', '/evil', '/.purko/main.py', '/dev/evil', '/proc/evil', '/tmp/ok']:\n    try:\n        open(path, 'w').write('x')\n        print(path, 'written')\n    except OSError as e:\n        print(path, 'refused', e.errno)\n",
    )
    .await;
    assert_eq!(
        outcome.stdout,
        "/etc/evil refused 30\n/usr/lib/evil refused 30\n/evil refused 30\n/.purko/main.py refused 30\n/dev/evil refused 30\n/proc/evil refused 2\n/tmp/ok written\n",
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_file_size_limit_holds() {
    let mut planned = plan(Language::Bash, &config(10, 10_000, &["/tmp"], false));
    planned.limits.file_size_bytes = 1 << 20;
    let outcome = purko_sandbox::run(
        &planned,
        "head -c 3000000 /dev/zero > /tmp/big; echo $?; stat -c %s /tmp/big",
        None,
    )
    .await
    .expect("runs");
    assert!(outcome.stdout.ends_with("1048576\n"), "{outcome:?}");
    assert!(
        outcome.stderr.contains("File size limit exceeded"),
        "{outcome:?}"
    );
    assert_eq!(outcome.limit, Some(Limit::FileSize));
}

#[tokio::test(flavor = "multi_thread")]
async fn host_secrets_cannot_be_read() {
    let outcome = python(
        "import os, glob\n\
         for path in ['/etc/shadow', '/proc/1/environ', '/proc/1/mem', '/proc/1/root/etc']:\n\
         \x20   try:\n\
         \x20       open(path, 'rb').read(10)\n\
         \x20       print(path, 'read')\n\
         \x20   except OSError as e:\n\
         \x20       print(path, 'refused')\n\
         leaked = set()\n\
         for path in glob.glob('/proc/[0-9]*/environ'):\n\
         \x20   try:\n\
         \x20       leaked.update(e.split(b'=')[0] for e in open(path, 'rb').read().split(b'\\0') if e)\n\
         \x20   except OSError:\n\
         \x20       pass\n\
         print(sorted(os.environ))\n\
         print(sorted(leaked))\n",
    )
    .await;
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(
        lines,
        vec![
            "/etc/shadow refused",
            "/proc/1/environ refused",
            "/proc/1/mem refused",
            "/proc/1/root/etc refused",
            "['HOME', 'LANG', 'PATH', 'TMPDIR']",
            "[b'HOME', b'LANG', b'PATH', b'TMPDIR']",
        ],
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_on_the_network_can_be_reached() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("bound").port();
    let outcome = python(&format!(
        "import socket\n\
         for host, port in [('127.0.0.1', {port}), ('169.254.169.254', 80), ('::1', {port})]:\n\
         \x20   try:\n\
         \x20       socket.create_connection((host, port), timeout=2)\n\
         \x20       print(host, 'connected')\n\
         \x20   except OSError as e:\n\
         \x20       print(host, 'refused')\n\
         try:\n\
         \x20   socket.getaddrinfo('example.com', 80)\n\
         \x20   print('resolved')\n\
         except OSError:\n\
         \x20   print('no resolver')\n"
    ))
    .await;
    assert_eq!(
        outcome.stdout, "127.0.0.1 refused\n169.254.169.254 refused\n::1 refused\nno resolver\n",
        "{outcome:?}"
    );
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "nothing came in");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sibling_cannot_be_traced() {
    let outcome = python(
        "import ctypes, os, time\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         child = os.fork()\n\
         if child == 0:\n\
         \x20   time.sleep(5)\n\
         \x20   os._exit(0)\n\
         print('attach', libc.ptrace(16, child, 0, 0), ctypes.get_errno())\n\
         print('vm_read', libc.process_vm_readv(child, 0, 0, 0, 0, 0), ctypes.get_errno())\n\
         os.kill(child, 9)\n",
    )
    .await;
    assert_eq!(outcome.stdout, "attach -1 1\nvm_read -1 1\n", "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn namespaces_and_mounts_cannot_be_made() {
    let outcome = bash(
        "unshare -U true && echo unshared-user\n\
         unshare -rn true && echo unshared-root\n\
         mount -t tmpfs none /tmp && echo mounted\n\
         umount /proc && echo unmounted\n\
         python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); print(\"unshare\", l.unshare(0x10000000), ctypes.get_errno()); print(\"chroot\", l.chroot(b\"/tmp\"), ctypes.get_errno())'\n\
         echo done",
    )
    .await;
    assert_eq!(
        outcome.stdout, "unshare -1 1\nchroot -1 1\ndone\n",
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_symlink_out_of_tmp_leads_nowhere() {
    let outcome = bash(
        "ln -s /etc/shadow /tmp/shadow; cat /tmp/shadow 2>/dev/null || echo no-shadow\n\
         ln -s / /tmp/root; echo x > /tmp/root/usr/evil 2>/dev/null || echo no-write\n\
         ln -s /proc/1/root /tmp/init; ls /tmp/init/ 2>/dev/null || echo no-init-root\n\
         ls /tmp",
    )
    .await;
    assert_eq!(
        outcome.stdout, "no-shadow\nno-write\nno-init-root\ninit\nroot\nshadow\n",
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_setuid_binary_gains_nothing() {
    let outcome = bash(
        "ls -l /usr/bin/su | cut -c1-10\n\
         su root -c 'id -u' </dev/null 2>/dev/null || echo su-failed\n\
         /usr/bin/mount -t tmpfs none /tmp 2>/dev/null || echo mount-failed\n\
         id -u",
    )
    .await;
    assert_eq!(
        outcome.stdout, "-rwsr-xr-x\nsu-failed\nmount-failed\n65534\n",
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
#[allow(unsafe_code)]
async fn no_descriptor_of_purko_reaches_the_program() {
    let leaky = std::fs::File::open("/etc/hostname").expect("a file to hold open");
    let fd = std::os::fd::AsRawFd::as_raw_fd(&leaky);
    // SAFETY: clears close-on-exec on a descriptor this test owns, as a careless library would.
    assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }, 0);
    let outcome = python("import os\nprint(sorted(os.listdir('/proc/self/fd')))").await;
    assert_eq!(outcome.stdout, "['0', '1', '2', '3']\n", "{outcome:?}");
    drop(leaky);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_open_files_limit_holds() {
    let outcome = python("files = [open('/dev/null') for _ in range(1000)]").await;
    assert_eq!(outcome.limit, Some(Limit::OpenFiles), "{outcome:?}");
    assert!(outcome.stderr.contains("Too many open files"));
}
