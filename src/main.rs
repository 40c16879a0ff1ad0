use std::process::ExitCode;

fn main() -> ExitCode {
    kuota::cli::run()
}
