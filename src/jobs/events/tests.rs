use super::*;

#[test]
fn notes_are_spelled_as_kueue_spells_them() {
    assert_eq!(
        JobEvent::started("cq"),
        JobEvent {
            reason: "Started",
            warning: false,
            note: "Admitted by clusterQueue cq".to_owned()
        }
    );
    assert_eq!(
        JobEvent::created_workload("ns/job-a-12345").note,
        "Created Workload: ns/job-a-12345"
    );
    assert_eq!(
        JobEvent::finished_workload("ns/w").note,
        "Workload 'ns/w' is declared finished"
    );
    assert_eq!(
        JobEvent::deleted_workload("ns/w").note,
        "Deleted not matching Workload: ns/w"
    );
    assert_eq!(
        JobEvent::updated_workload("ns/w").note,
        "Updated not matching Workload for suspended job: ns/w"
    );
    let missing = JobEvent::workload_priority_class_not_found("high");
    assert!(missing.warning);
    assert_eq!(missing.reason, "WorkloadPriorityClassNotFound");
    assert_eq!(missing.note, "WorkloadPriorityClass \"high\" not found");
    assert!(JobEvent::err_workload_compose("x").warning);
    assert_eq!(JobEvent::excess_pod_deleted().reason, "ExcessPodDeleted");
    assert_eq!(JobEvent::stopped(STOP_NOT_ADMITTED).reason, "Stopped");
}

#[test]
fn long_notes_are_cut_at_1024_bytes_on_a_character_boundary() {
    let note = JobEvent::stopped(&"é".repeat(1000)).note;
    assert!(note.len() <= 1024);
    assert!(note.ends_with(" ..."));
    let short = JobEvent::stopped("short").note;
    assert_eq!(short, "short");
}
