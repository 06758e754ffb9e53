//! Deliberately naive adapters, one per lost-response case (README.md,
//! "The ten lost-response cases"). Each is written the way such code is
//! usually written, gets most things right, and has the one flaw its case must
//! catch; each module's doc names the flaw and the case.
//!
//! [`kit`] holds what they share (HTTP helper, a lock-free file store, reply
//! builders) so the flaws stand out in each module.

use lostreply_harness::adapter::AdapterFactory;

pub mod kit;

pub mod case01_fails_on_timeout;
pub mod case02_fresh_key_per_attempt;
pub mod case03_processing_is_done;
pub mod case04_tagged_retries;
pub mod case05_action_keyed;
pub mod case06_trusting_webhooks;
pub mod case07_unlocked_reconciler;
pub mod case08_memory_only;
pub mod case09_eternal_keys;
pub mod case10_retry_after_review;

/// The naive adapter for one case (1 to 10), if there is one.
pub fn naive_adapter(case: u8) -> Option<&'static kit::Factory> {
    let factory = match case {
        1 => &case01_fails_on_timeout::FACTORY,
        2 => &case02_fresh_key_per_attempt::FACTORY,
        3 => &case03_processing_is_done::FACTORY,
        4 => &case04_tagged_retries::FACTORY,
        5 => &case05_action_keyed::FACTORY,
        6 => &case06_trusting_webhooks::FACTORY,
        7 => &case07_unlocked_reconciler::FACTORY,
        8 => &case08_memory_only::FACTORY,
        9 => &case09_eternal_keys::FACTORY,
        10 => &case10_retry_after_review::FACTORY,
        _ => return None,
    };
    Some(factory)
}

/// Every naive adapter with the case that must catch it, in case order.
pub fn naive_adapters() -> Vec<(u8, Box<dyn AdapterFactory>)> {
    (1..=10)
        .filter_map(|case| {
            naive_adapter(case).map(|f| {
                let factory: Box<dyn AdapterFactory> = Box::new(kit::Factory {
                    name: f.name,
                    build: f.build,
                });
                (case, factory)
            })
        })
        .collect()
}
