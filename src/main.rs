use std::process::ExitCode;

// jemalloc rather than glibc's allocator: it keeps no header per allocation and fewer
// part-used pages, which a controller holding tens of thousands of small objects (each
// Workload is dozens of allocations) pays for in resident memory; its settings are in
// `.cargo/config.toml`.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    kuota::cli::run()
}
