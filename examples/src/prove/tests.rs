//! The verdicts `prove` draws from runs, on runs made up by hand.

use super::finding::At;
use super::*;

fn failed() -> Outcome {
    Outcome {
        end: RunEnd::Failed(vec![Finding {
            at: At::FinalStatus,
            check: Broken::Expectation {
                key: "final".to_owned(),
            },
            operation_id: Some("op-1".to_owned()),
            message: "op-1: final status is failed".to_owned(),
        }]),
        reproduce: "lostreply run --builtin x --seed 1 f.yaml".to_owned(),
    }
}

fn passed() -> Outcome {
    Outcome {
        end: RunEnd::Passed,
        reproduce: String::new(),
    }
}

/// Runs of file 0 where `fails(design, seed)` says which fail.
fn runs(correct: &[Member], fails: impl Fn(&str, u64) -> bool) -> Runs {
    let mut runs = Runs::new();
    for member in correct {
        for seed in 1..=3 {
            let outcome = if fails(&member.name, seed) {
                failed()
            } else {
                passed()
            };
            runs.insert((0, member.name.clone(), seed), outcome);
        }
    }
    runs
}

#[test]
fn a_file_every_correct_design_passes_waits_for_the_flawed_ones() {
    let correct = family::correct(Family::Http);
    let runs = runs(&correct, |_, _| false);
    assert!(judge_correct(&runs, 0, "f.yaml", &correct).is_none());
}

#[test]
fn failing_some_designs_is_design_bound_and_all_is_impossible() {
    let correct = family::correct(Family::Http);
    let some = runs(&correct, |name, seed| name == "lazy" && seed >= 2);
    match judge_correct(&some, 0, "f.yaml", &correct) {
        Some(FileVerdict::DesignBound { failing, passing }) => {
            assert_eq!(failing.len(), 1);
            assert_eq!(failing[0].design, "lazy");
            assert_eq!(failing[0].failed_seeds, vec![2, 3]);
            assert_eq!(failing[0].seed, 2);
            assert_eq!(
                failing[0].reproduce_process,
                "lostreply run --adapter 'lostreply adapter lazy' --seed 2 f.yaml"
            );
            assert_eq!(passing.len(), correct.len() - 1);
        }
        other => panic!("not design-bound: {other:?}"),
    }
    let all = runs(&correct, |_, seed| seed == 3);
    match judge_correct(&all, 0, "f.yaml", &correct) {
        Some(FileVerdict::Impossible { failing }) => assert_eq!(failing.len(), correct.len()),
        other => panic!("not impossible: {other:?}"),
    }
}

#[test]
fn a_harness_failure_leaves_the_file_not_judged() {
    let correct = family::correct(Family::Http);
    let mut runs = runs(&correct, |_, _| true);
    runs.insert(
        (0, "eager".to_owned(), 2),
        Outcome {
            end: RunEnd::Infrastructure("no port".to_owned()),
            reproduce: String::new(),
        },
    );
    match judge_correct(&runs, 0, "f.yaml", &correct) {
        Some(FileVerdict::NotJudged {
            why: NotJudged::Infrastructure { design, seed, .. },
        }) => assert_eq!((design.as_str(), seed), ("eager", 2)),
        other => panic!("judged: {other:?}"),
    }
}

#[test]
fn an_unsound_file_decides_the_exit_code_before_an_unjudged_one() {
    let file = |verdict| FileProof {
        path: "f.yaml".to_owned(),
        id: "f".to_owned(),
        family: None,
        verdict,
    };
    let sound = || FileVerdict::Sound {
        correct: Vec::new(),
        flaws: Vec::new(),
    };
    let profile = || FileVerdict::NotJudged {
        why: NotJudged::Profile {
            profile: "stripe".to_owned(),
        },
    };
    let infrastructure = || FileVerdict::NotJudged {
        why: NotJudged::Infrastructure {
            design: "eager".to_owned(),
            seed: 1,
            message: String::new(),
            reproduce: String::new(),
        },
    };
    let impossible = || FileVerdict::Impossible {
        failing: Vec::new(),
    };
    let code = |verdicts: Vec<FileVerdict>| {
        Proof {
            seeds: 1,
            files: verdicts.into_iter().map(file).collect(),
        }
        .exit_code()
    };
    assert_eq!(code(vec![sound()]), exit::OK);
    assert_eq!(
        code(vec![sound(), infrastructure()]),
        exit::ADAPTER_OR_INFRA
    );
    assert_eq!(code(vec![infrastructure(), profile()]), exit::BAD_INPUT);
    assert_eq!(
        code(vec![profile(), impossible(), infrastructure()]),
        exit::VIOLATION
    );
}

#[test]
fn a_flaw_is_counted_per_seed_and_per_check() {
    let flawed = family::flawed(Family::Http);
    let member = &flawed[0];
    let mut runs = Runs::new();
    runs.insert((0, member.name.clone(), 1), failed());
    runs.insert((0, member.name.clone(), 2), passed());
    runs.insert((0, member.name.clone(), 3), failed());
    let record = flaw_record(&runs, 0, member);
    assert_eq!(record.caught_seeds, vec![1, 3]);
    assert_eq!(
        record.checks,
        vec![CheckCount {
            check: Broken::Expectation {
                key: "final".to_owned()
            },
            seeds: 2
        }]
    );
}
