//! Writing a command's output and errors without panicking: `print!` panics when standard output
//! is a closed pipe (`kuota crds | head`) or a full disk (`> /dev/full`).

use std::fmt::Display;
use std::io::{self, Write};
use std::process::ExitCode;

/// Standard output could not take the whole output.
#[derive(Debug, thiserror::Error)]
#[error("writing standard output: {0}")]
pub struct WriteError(#[from] io::Error);

/// Writes `text` to standard output and flushes it. A reader that went away (a closed pipe) is not
/// an error: like `yes | head`, the command just stops writing. Any other failure is returned.
pub fn print(text: &str) -> Result<(), WriteError> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Prints `text`; when that fails, reports it for `command` and exits with failure.
pub fn print_or_report(command: &str, text: &str) -> ExitCode {
    match print(text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            report(command, error);
            ExitCode::FAILURE
        }
    }
}

/// Writes one error line to standard error. Nothing is left to tell when that fails too.
pub fn report(command: &str, message: impl Display) {
    let _ = writeln!(io::stderr().lock(), "{command}: {message}");
}
