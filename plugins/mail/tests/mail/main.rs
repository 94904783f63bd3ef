//! Integration tests of the mail plugin through its plugin entry points:
//! the fixtures of `tests/fixtures/formats/mail/` (made by `make_mail.py`,
//! plus one real Outlook file), Outlook messages built here with the `cfb`
//! crate, mailbox bounds and hostile inputs.
//!
//! Native only: the tests read what a parse handed to the host through
//! `attachments::take`, which only a native build keeps.

#![cfg(not(target_arch = "wasm32"))]

mod common;
mod eml;
mod hostile;
mod mbox;
mod outlook;
