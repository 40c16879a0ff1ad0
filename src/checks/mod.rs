//! The admission checks kuota runs itself, as pure rules: what their controllers create, delete
//! and write for a Workload, decided from objects and a time that is passed in.

pub mod provisioning;
