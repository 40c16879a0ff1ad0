use tokio::task::JoinSet;

use super::*;

#[tokio::test]
async fn a_panicked_task_is_reported_as_a_panic_with_its_message() {
    let joined = tokio::spawn(async { panic!("the ledger is inconsistent") }).await;
    let error = join_failed("the admission writer", joined.expect_err("it panicked"));
    assert!(
        matches!(
            &error,
            ControllerError::Panicked { task: "the admission writer", message }
                if message == "the ledger is inconsistent"
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the admission writer panicked: the ledger is inconsistent"
    );
}

#[tokio::test]
async fn a_cancelled_task_is_not_reported_as_a_panic() {
    let task = tokio::spawn(std::future::pending::<()>());
    task.abort();
    let error = join_failed("a server", task.await.expect_err("it was cancelled"));
    assert!(matches!(
        error,
        ControllerError::Cancelled { task: "a server" }
    ));
}

#[tokio::test]
async fn the_first_panic_of_a_set_is_found_among_tasks_that_end_normally() {
    let mut tasks = JoinSet::new();
    tasks.spawn(async {});
    tasks.spawn(async {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let kind = "Pod";
        panic!("the {kind} watch failed");
    });
    tasks.spawn(std::future::pending());
    let error = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        first_panic("a watch", &mut tasks),
    )
    .await
    .expect("the panic is found");
    assert_eq!(error.to_string(), "a watch panicked: the Pod watch failed");
}

#[tokio::test]
async fn a_set_whose_tasks_all_end_normally_never_reports() {
    let mut tasks = JoinSet::new();
    tasks.spawn(async {});
    let waited = tokio::time::timeout(
        std::time::Duration::from_millis(50),
        first_panic("a watch", &mut tasks),
    )
    .await;
    assert!(waited.is_err(), "nothing panicked");
}

#[tokio::test]
async fn a_rethrown_panic_reaches_whoever_waits_on_the_joining_task() {
    let joining = tokio::spawn(async {
        let mut connections = JoinSet::new();
        connections.spawn(async { panic!("a connection panicked") });
        while let Some(joined) = connections.join_next().await {
            rethrow(joined);
        }
    });
    let error = joining.await.expect_err("the panic is carried on");
    let payload = error.into_panic();
    assert_eq!(payload_message(payload.as_ref()), "a connection panicked");
}
