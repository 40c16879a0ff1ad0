//! The panic policy of `kuota controller` (docs/operations.md): a panic on any task ends the
//! process, logged, with exit code `PANIC_EXIT_CODE`. The test runs its own binary again as a
//! child that installs the controller's hook and panics on one spawned task while others run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kuota::controllers::panics::{PANIC_EXIT_CODE, exit_on_panic};

/// Set in the child's environment: the test then plays the controller process.
const CHILD_ROLE: &str = "KUOTA_PANIC_POLICY_CHILD";
/// What the child prints when nothing ended it: the panic was swallowed.
const SURVIVED: &str = "the process outlived its panicked task";
/// How long the child runs its other tasks before it gives up waiting to be ended.
const CHILD_LIFETIME: Duration = Duration::from_secs(20);

/// The child: a controller-like runtime whose spawned task panics while others keep working.
fn run_child() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    exit_on_panic();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let ticking = tokio::spawn(async {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        // Detached, as the controller's event recorders are: nobody joins it.
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let cache = "Workloads";
            panic!("the {cache} cache is inconsistent");
        });
        tokio::time::sleep(CHILD_LIFETIME).await;
        ticking.abort();
    });
    println!("{SURVIVED}");
    std::process::exit(0);
}

#[test]
fn a_panic_in_a_spawned_task_ends_the_process_with_the_panic_exit_code_and_says_why() {
    if std::env::var_os(CHILD_ROLE).is_some() {
        run_child();
        return;
    }
    let started = Instant::now();
    let child = Command::new(std::env::current_exe().expect("the test binary"))
        .args([
            "--exact",
            "a_panic_in_a_spawned_task_ends_the_process_with_the_panic_exit_code_and_says_why",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ROLE, "1")
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("the child runs");
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(
        !stdout.contains(SURVIVED),
        "the panic was swallowed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert_eq!(
        child.status.code(),
        Some(PANIC_EXIT_CODE),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        took < CHILD_LIFETIME,
        "the process ended only after {took:?}"
    );
    let logged = stderr
        .lines()
        .find(|line| line.contains("ERROR") && line.contains("a task panicked"))
        .unwrap_or_else(|| panic!("no error logged for the panic\nstderr:\n{stderr}"));
    assert!(
        logged.contains("the Workloads cache is inconsistent"),
        "the log names the panic: {logged}"
    );
    assert!(
        logged.contains(&format!("{}:", file!())),
        "the log names where it happened: {logged}"
    );
    assert!(
        logged.contains("task=") && !logged.contains("task=none"),
        "the log names the tokio task: {logged}"
    );
}
