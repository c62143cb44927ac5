//! A Rust child (`chaos __child --role pub|sub --topic block|drop --id N
//! --dir D --block-timeout-ms T`): one endpoint on one topic, reporting into
//! the run directory until the orchestrator's stop file appears (or it is
//! killed, which is the point).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use horus::prelude::*;
use horus::TopicError;

use crate::wire;

/// The two topics of the soak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TopicKind {
    /// `Overflow::Block`: no message may ever be lost.
    Block,
    /// `Overflow::DropOldest`: losses allowed, but every one counted.
    Drop,
}

impl TopicKind {
    pub(crate) const ALL: [TopicKind; 2] = [TopicKind::Block, TopicKind::Drop];

    pub(crate) fn name(self) -> &'static str {
        match self {
            TopicKind::Block => "block",
            TopicKind::Drop => "drop",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<TopicKind> {
        TopicKind::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// A child's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Pub,
    Sub,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Pub => "pub",
            Role::Sub => "sub",
        }
    }
}

/// What a child is told on its command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChildArgs {
    pub(crate) role: Role,
    pub(crate) topic: TopicKind,
    pub(crate) id: u64,
    pub(crate) dir: PathBuf,
    pub(crate) block_timeout: Duration,
}

impl ChildArgs {
    /// The arguments after `__child` (the same ones the Python child takes).
    pub(crate) fn to_args(&self) -> Vec<String> {
        vec![
            "--role".into(),
            self.role.name().into(),
            "--topic".into(),
            self.topic.name().into(),
            "--id".into(),
            self.id.to_string(),
            "--dir".into(),
            self.dir.display().to_string(),
            "--block-timeout-ms".into(),
            self.block_timeout.as_millis().to_string(),
        ]
    }

    pub(crate) fn parse(args: impl IntoIterator<Item = String>) -> anyhow::Result<ChildArgs> {
        let (mut role, mut topic, mut id, mut dir, mut timeout) = (None, None, None, None, None);
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            let v = args
                .next()
                .with_context(|| format!("{flag} needs a value"))?;
            match flag.as_str() {
                "--role" => {
                    role = Some(match v.as_str() {
                        "pub" => Role::Pub,
                        "sub" => Role::Sub,
                        _ => bail!("--role pub|sub, not {v:?}"),
                    })
                }
                "--topic" => topic = Some(TopicKind::parse(&v).context("--topic block|drop")?),
                "--id" => id = Some(v.parse()?),
                "--dir" => dir = Some(PathBuf::from(v)),
                "--block-timeout-ms" => timeout = Some(Duration::from_millis(v.parse()?)),
                _ => bail!("unknown child argument {flag:?}"),
            }
        }
        Ok(ChildArgs {
            role: role.context("--role missing")?,
            topic: topic.context("--topic missing")?,
            id: id.context("--id missing")?,
            dir: dir.context("--dir missing")?,
            block_timeout: timeout.context("--block-timeout-ms missing")?,
        })
    }
}

/// Runs the child; returns its exit code.
pub(crate) fn run(args: ChildArgs) -> anyhow::Result<i32> {
    die_with_parent()?;
    let opening = std::time::Instant::now();
    let topic = open_topic(args.topic, args.block_timeout)?;
    match args.role {
        Role::Pub => crate::child_pub::run(&args, &topic, opening),
        Role::Sub => crate::child_sub::run(&args, &topic, opening),
    }
}

/// Both languages open the topics with exactly these settings.
fn open_topic(kind: TopicKind, block_timeout: Duration) -> anyhow::Result<Topic<Header>> {
    let overflow = match kind {
        TopicKind::Block => Overflow::Block {
            timeout: block_timeout,
        },
        TopicKind::Drop => Overflow::DropOldest,
    };
    let name = match kind {
        TopicKind::Block => wire::TOPIC_BLOCK,
        TopicKind::Drop => wire::TOPIC_DROP,
    };
    Ok(Topic::<Header>::builder(name)
        .depth(wire::DEPTH)
        .overflow(overflow)
        .max_publishers(wire::MAX_PUBLISHERS)
        .max_subscribers(wire::MAX_SUBSCRIBERS)
        .open()?)
}

/// Makes an endpoint, retrying while every place is taken (places of killed
/// processes are freed once their death is noticed). Gives up after 5 s.
pub(crate) fn join<E>(mut make: impl FnMut() -> Result<E, TopicError>) -> anyhow::Result<E> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match make() {
            Err(TopicError::Full { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            r => return Ok(r?),
        }
    }
}

/// Whether the orchestrator asked this role to stop.
pub(crate) fn stop_requested(dir: &Path, role: Role) -> bool {
    dir.join(format!("stop.{}", role.name())).exists()
}

/// Exits with the orchestrator: SIGKILL when the parent dies, so a crashed
/// orchestrator leaves no children behind.
fn die_with_parent() -> anyhow::Result<()> {
    // SAFETY: PR_SET_PDEATHSIG with a valid signal number has no memory
    // effects; getppid cannot fail.
    let (rc, ppid) = unsafe {
        (
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong),
            libc::getppid(),
        )
    };
    if rc != 0 {
        bail!(
            "prctl(PR_SET_PDEATHSIG): {}",
            std::io::Error::last_os_error()
        );
    }
    if ppid == 1 {
        bail!("parent already gone");
    }
    Ok(())
}
