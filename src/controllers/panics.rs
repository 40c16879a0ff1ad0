//! What a panic does in `kuota controller`: whichever task it happens on, the process logs it
//! and exits with [`PANIC_EXIT_CODE`]. A task's state lives only in memory (caches fed by
//! watches, keys with writes in flight), so a task that died alone would leave the others
//! deciding on a part that no longer moves; a restarted pod rebuilds every cache from the
//! watches, and the Lease it stops renewing passes to another replica. Kueue's manager likewise
//! dies on a panic outside a reconciler.

use std::any::Any;

use tokio::task::JoinError;

use super::error::ControllerError;

/// The exit code of a process that panicked: Rust's own for a panic that ends `main`.
pub const PANIC_EXIT_CODE: i32 = 101;

/// Installs the process-wide panic hook: a panic on any thread or task is logged (its message,
/// where it happened, the thread and the tokio task) and the process exits with
/// [`PANIC_EXIT_CODE`] at once, before anything could wait on the task that died.
pub fn exit_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let message = payload_message(info.payload());
        let location = info
            .location()
            .map_or_else(|| "an unknown place".to_owned(), ToString::to_string);
        let thread = std::thread::current();
        let thread = thread.name().unwrap_or("unnamed");
        let task = tokio::task::try_id().map(|id| id.to_string());
        // Recorded as `RUST_BACKTRACE` asks.
        let backtrace = std::backtrace::Backtrace::capture();
        let backtrace = (backtrace.status() == std::backtrace::BacktraceStatus::Captured)
            .then(|| backtrace.to_string());
        tracing::error!(
            panic = %message,
            %location,
            thread,
            task = task.as_deref().unwrap_or("none"),
            backtrace = backtrace.as_deref(),
            exit_code = PANIC_EXIT_CODE,
            "a task panicked; the process exits so that it restarts with every cache rebuilt"
        );
        std::process::exit(PANIC_EXIT_CODE);
    }));
}

/// The message a panic was raised with.
pub fn payload_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Why the task `task` ended without its result: it panicked (with what message), or it was
/// cancelled.
pub(crate) fn join_failed(task: &'static str, error: JoinError) -> ControllerError {
    match error.try_into_panic() {
        Ok(payload) => ControllerError::Panicked {
            task,
            message: payload_message(payload.as_ref()),
        },
        Err(_) => ControllerError::Cancelled { task },
    }
}

/// Resolves with the first panic among `tasks` (which may end normally meanwhile); never when
/// none panics.
pub(crate) async fn first_panic(
    task: &'static str,
    tasks: &mut tokio::task::JoinSet<()>,
) -> ControllerError {
    while let Some(joined) = tasks.join_next().await {
        if let Err(error) = joined {
            return join_failed(task, error);
        }
    }
    std::future::pending().await
}

/// Carries a panic of a task joined from a set on into the task that joined it, so that whoever
/// waits on that one sees it.
pub(crate) fn rethrow(joined: Result<(), JoinError>) {
    if let Err(error) = joined
        && let Ok(payload) = error.try_into_panic()
    {
        std::panic::resume_unwind(payload);
    }
}

#[cfg(test)]
mod tests;
