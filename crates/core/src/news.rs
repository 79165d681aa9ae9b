//! News: what happened to the workspace since a cursor, for whoever shows it live (the web page's event stream, MCP's
//! resource updates). One read ([`Reader::news_after`](crate::Reader::news_after)) gives both kinds: applied changes
//! (the change log, undo included) and review sets staged to, decided or dropped (`review_news`, local to this
//! device). Writes by any process on the same file count, since both are tables of the file.
//!
//! One watcher per workspace ([`Workspace::news`](crate::Workspace::news), shared by the handle's clones) reads the
//! news every [`WATCH_INTERVAL`] while someone listens and hands each batch to every [`NewsReceiver`]; nobody else
//! polls. It is a thread of its own (core has no async runtime), started by the first receiver and ended after the
//! last one is dropped.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rusqlite::params;

use crate::entity::{Change, EntityKind};
use crate::error::Result;
use crate::read::Reader;

/// How often the watcher reads the news while someone listens: two indexed `max()` queries when nothing happened.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// The most changes one read returns (the rest come in the next).
pub(crate) const BATCH: u64 = 500;

/// The most batches a receiver keeps unread; past it the oldest go, and the receiver reads what it missed itself.
const KEPT: usize = 64;

/// Where a reader of the news is: the last change and the last review news it has seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NewsCursor {
    /// The sequence number of the last change seen (the change log's `seq`).
    pub change: i64,
    /// The sequence number of the last review news seen.
    pub review: i64,
}

/// What happened to a review set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewEvent {
    /// An AI client's write was staged in it (a new set, or more in an open one).
    Staged,
    /// The user accepted or rejected some of it.
    Decided,
    /// Staged changes left it (the client put a row back as it was, or its note became protected); a set left
    /// empty is gone.
    Dropped,
}

/// One piece of review news.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewNews {
    /// Its sequence number.
    pub seq: i64,
    /// The review set.
    pub set_id: i64,
    /// What happened.
    pub event: ReviewEvent,
}

/// What happened after a cursor, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct News {
    /// Where a reader is after this news.
    pub cursor: NewsCursor,
    /// Applied changes (an undo is a change too).
    pub changes: Vec<Change>,
    /// Review sets staged to, decided or dropped.
    pub reviews: Vec<ReviewNews>,
}

impl News {
    /// Whether nothing happened.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.reviews.is_empty()
    }

    /// This news without what a reader at `cursor` has seen already.
    pub fn after(&self, cursor: NewsCursor) -> News {
        News {
            cursor: self.cursor.max_each(cursor),
            changes: self.changes.iter().filter(|c| c.seq > cursor.change).cloned().collect(),
            reviews: self.reviews.iter().filter(|r| r.seq > cursor.review).cloned().collect(),
        }
    }
}

impl NewsCursor {
    fn max_each(self, other: NewsCursor) -> NewsCursor {
        NewsCursor {
            change: self.change.max(other.change),
            review: self.review.max(other.review),
        }
    }
}

impl Change {
    /// The note this change is about, when its id says so: a note's own change, or one of its tags' (an
    /// attribute's or an attachment's note is in the row, not the id).
    pub fn note_id(&self) -> Option<&str> {
        match self.entity {
            EntityKind::Note => Some(&self.entity_id),
            EntityKind::NoteTag => self.entity_id.split('/').next(),
            _ => None,
        }
    }
}

impl Reader<'_> {
    /// Where the news stands now: a reader starting here is told only what happens from now on.
    pub fn news_cursor(&self) -> Result<NewsCursor> {
        let review: i64 = self
            .conn
            .query_row("SELECT coalesce(max(seq), 0) FROM review_news", [], |r| r.get(0))?;
        Ok(NewsCursor {
            change: self.latest_change_seq()?,
            review,
        })
    }

    /// What happened after `cursor`: at most `limit` changes (the rest in the next read) and every review news.
    pub fn news_after(&self, cursor: NewsCursor, limit: u64) -> Result<News> {
        let now = self.news_cursor()?;
        let changes = if now.change > cursor.change {
            self.changes_after(cursor.change, limit)?
        } else {
            Vec::new()
        };
        let reviews = if now.review > cursor.review {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT seq, set_id, kind FROM review_news WHERE seq > ?1 ORDER BY seq")?;
            let rows = stmt.query_map(params![cursor.review], |r| {
                let kind: String = r.get(2)?;
                Ok(ReviewNews {
                    seq: r.get(0)?,
                    set_id: r.get(1)?,
                    event: match kind.as_str() {
                        "staged" => ReviewEvent::Staged,
                        "decided" => ReviewEvent::Decided,
                        _ => ReviewEvent::Dropped,
                    },
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        Ok(News {
            cursor: NewsCursor {
                change: changes.last().map_or(cursor.change, |c| c.seq),
                review: reviews.last().map_or(cursor.review, |r| r.seq),
            },
            changes,
            reviews,
        })
    }
}

/// The watcher of one workspace (shared by its handle's clones).
#[derive(Default)]
pub(crate) struct NewsFeed {
    state: Mutex<FeedState>,
}

impl std::fmt::Debug for NewsFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewsFeed").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct FeedState {
    running: bool,
    receivers: Vec<Weak<Inbox>>,
}

/// One receiver's unread batches.
#[derive(Default)]
pub(crate) struct Inbox {
    state: Mutex<InboxState>,
    arrived: Condvar,
}

#[derive(Default)]
struct InboxState {
    batches: VecDeque<Arc<News>>,
    /// Batches were dropped unread: the receiver reads from its cursor itself.
    lagged: bool,
    waker: Option<Waker>,
}

impl Inbox {
    fn push(&self, news: &Arc<News>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.batches.len() == KEPT {
            state.batches.pop_front();
            state.lagged = true;
        }
        state.batches.push_back(news.clone());
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
        self.arrived.notify_all();
    }
}

/// The news of a workspace from the moment it was made, batch by batch
/// ([`Workspace::news`](crate::Workspace::news)).
pub struct NewsReceiver {
    read: ReadNews,
    inbox: Arc<Inbox>,
    cursor: NewsCursor,
}

impl std::fmt::Debug for NewsReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewsReceiver").field("cursor", &self.cursor).finish()
    }
}

/// How a receiver and the watcher read the news: a read of the workspace as the user.
pub(crate) type ReadNews = Arc<dyn Fn(NewsCursor) -> Result<News> + Send + Sync>;

impl NewsFeed {
    /// Registers a receiver's inbox; returns it, and whether the watcher must be started (it was not running).
    pub(crate) fn register(&self) -> (Arc<Inbox>, bool) {
        let inbox = Arc::new(Inbox::default());
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.receivers.retain(|r| r.strong_count() > 0);
        state.receivers.push(Arc::downgrade(&inbox));
        let start = !std::mem::replace(&mut state.running, true);
        (inbox, start)
    }

    /// The watcher could not start: the next receiver tries again.
    pub(crate) fn not_running(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).running = false;
    }
}

impl NewsReceiver {
    /// A receiver at `cursor`, the watcher being at `now`: one behind reads what it missed first.
    pub(crate) fn new(read: ReadNews, inbox: Arc<Inbox>, cursor: NewsCursor, now: NewsCursor) -> NewsReceiver {
        if cursor.change < now.change || cursor.review < now.review {
            inbox.state.lock().unwrap_or_else(|e| e.into_inner()).lagged = true;
        }
        NewsReceiver { read, inbox, cursor }
    }
}

/// The watcher's loop: reads the news while any receiver is alive, and hands each batch to all of them.
pub(crate) fn watch(read: &ReadNews, feed: &Arc<NewsFeed>, mut cursor: NewsCursor) {
    loop {
        std::thread::sleep(WATCH_INTERVAL);
        let receivers: Vec<Arc<Inbox>> = {
            let mut state = feed.state.lock().unwrap_or_else(|e| e.into_inner());
            let alive: Vec<Arc<Inbox>> = state.receivers.iter().filter_map(Weak::upgrade).collect();
            if alive.is_empty() {
                state.receivers.clear();
                state.running = false;
                return;
            }
            alive
        };
        let news = match read(cursor) {
            Ok(news) => news,
            // Tried again at the next tick; core logs nothing itself.
            Err(_) => continue,
        };
        if news.is_empty() {
            continue;
        }
        cursor = news.cursor;
        let news = Arc::new(news);
        for inbox in receivers {
            inbox.push(&news);
        }
    }
}

impl NewsReceiver {
    /// Where this receiver is: everything up to it was handed out.
    pub fn cursor(&self) -> NewsCursor {
        self.cursor
    }

    /// The next news this receiver has not seen, waiting for it.
    pub fn recv(&mut self) -> NextNews<'_> {
        NextNews { receiver: self }
    }

    /// The next news, waiting at most `timeout` (`None` when nothing happened meanwhile).
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<News>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(news) = self.take()? {
                return Ok(Some(news));
            }
            let state = self.inbox.state.lock().unwrap_or_else(|e| e.into_inner());
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            if state.batches.is_empty() && !state.lagged {
                let _ = self.inbox.arrived.wait_timeout(state, left);
            }
        }
    }

    /// What is waiting, without waiting: `None` when nothing new arrived.
    fn take(&mut self) -> Result<Option<News>> {
        let (batches, lagged) = {
            let mut state = self.inbox.state.lock().unwrap_or_else(|e| e.into_inner());
            (std::mem::take(&mut state.batches), std::mem::take(&mut state.lagged))
        };
        let mut news = if lagged {
            (self.read)(self.cursor)?
        } else {
            News {
                cursor: self.cursor,
                ..News::default()
            }
        };
        for batch in batches {
            let fresh = batch.after(news.cursor);
            news.cursor = fresh.cursor;
            news.changes.extend(fresh.changes);
            news.reviews.extend(fresh.reviews);
        }
        self.cursor = self.cursor.max_each(news.cursor);
        Ok((!news.is_empty()).then_some(news))
    }
}

/// The future of [`NewsReceiver::recv`].
pub struct NextNews<'a> {
    receiver: &'a mut NewsReceiver,
}

impl std::fmt::Debug for NextNews<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NextNews").finish_non_exhaustive()
    }
}

impl Future for NextNews<'_> {
    type Output = Result<News>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<News>> {
        {
            // The waker is stored before looking, so a batch arriving in between wakes this task.
            let mut state = self.receiver.inbox.state.lock().unwrap_or_else(|e| e.into_inner());
            state.waker = Some(cx.waker().clone());
        }
        match self.receiver.take() {
            Ok(Some(news)) => Poll::Ready(Ok(news)),
            Ok(None) => Poll::Pending,
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}
