//! The key's scope: another endpoint, another tenant.

use super::basic::auth;
use super::ctx::{Ctx, KeyUse};
use super::trail::{Stop, Trail};
use crate::client::Request;

/// The same key and body on the main path, then on `other_path`.
pub async fn other_endpoint(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some(other) = c.contract.other_path.clone() else {
        t.skip("the contract names no other_path");
        return Ok(());
    };
    let marker = c.marker("other_endpoint", 0);
    let key = KeyUse::Key(c.key("other_endpoint", 0));
    let body = c.body(&marker);
    let first = c
        .send(t, "main endpoint", &c.create_main(&body, &key))
        .await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let second = c
        .send(
            t,
            "other endpoint, same key",
            &c.create(&other, &body, &key, &c.contract.primary),
        )
        .await?;
    if !c.is_success(second.status) {
        t.fail(format!(
            "the same key on {other} answered {}: the key is shared across endpoints",
            second.status
        ));
    } else if c.id_of(&second) == c.id_of(&first) {
        t.fail(format!(
            "the same key on {other} replayed the main endpoint's object"
        ));
    } else {
        t.held(format!("{other} did its own work under the same key"));
    }
    Ok(())
}

/// The same key and body from the second tenant.
pub async fn cross_tenant(c: &Ctx, t: &mut Trail) -> Result<(), Stop> {
    let Some(second_tenant) = c.contract.second_tenant.clone() else {
        t.skip("the contract names no second_tenant");
        return Ok(());
    };
    let marker = c.marker("cross_tenant", 0);
    let key = KeyUse::Key(c.key("cross_tenant", 0));
    let body = c.body(&marker);
    let first = c.send(t, "tenant 1", &c.create_main(&body, &key)).await?;
    if !c.is_success(first.status) {
        return Err(Stop(format!("the first create answered {}", first.status)));
    }
    let Some(first_id) = c.id_of(&first) else {
        return Err(Stop("the first create named no id".to_owned()));
    };
    let second = c
        .send(
            t,
            "tenant 2, same key and body",
            &c.create(&c.contract.path, &body, &key, &second_tenant),
        )
        .await?;
    if String::from_utf8_lossy(&second.body).contains(&first_id) {
        t.hard(format!(
            "tenant 2's answer ({}) holds tenant 1's object {first_id}: a cross-tenant leak",
            second.status
        ));
    } else if !c.is_success(second.status) {
        t.fail(format!(
            "tenant 2's create answered {}: keys are shared across tenants (no leak, but no separate work)",
            second.status
        ));
    } else {
        t.held("tenant 2 got its own object");
    }
    if let Some(retrieve) = &c.contract.retrieve {
        let req = Request {
            method: "GET".to_owned(),
            path: retrieve
                .path
                .replace("{id}", &crate::readback::percent(&first_id)),
            headers: auth(c, &second_tenant, retrieve.auth),
            body: Vec::new(),
        };
        let got = c.send(t, "tenant 2 retrieves tenant 1's id", &req).await?;
        if (200..300).contains(&got.status) && String::from_utf8_lossy(&got.body).contains(&marker)
        {
            t.hard(format!("tenant 2 can retrieve tenant 1's {first_id}"));
        }
    }
    Ok(())
}
