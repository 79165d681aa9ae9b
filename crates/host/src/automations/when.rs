//! When an automation runs: a schedule (daily at a time, weekly on a day at a time, every N hours or minutes) or a
//! trigger (a note created or changed, a tag added, a task's due date reached), as config.toml writes them, and the
//! slots a schedule gives: the times it runs at, in this computer's time zone.

use anyhow::{Context, bail};
use jiff::civil::{Date, DateTime, Time, Weekday};
use jiff::{ToSpan, Zoned};

/// A schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// Every day at a time.
    Daily(Time),
    /// Every week on a day at a time.
    Weekly(Weekday, Time),
    /// Every so many minutes, from midnight when they divide a day (every 6 hours: 00:00, 06:00, 12:00, 18:00).
    Every(u32),
}

/// A trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// A note created in the automation's notebooks.
    NoteCreated,
    /// A note created or changed there (once it has been left alone a while).
    NoteChanged,
    /// A tag added to a note there: any tag, or this one.
    TagAdded(Option<String>),
    /// Open tasks there whose due date is today, once a day at this time.
    TaskDue(Time),
}

/// When open tasks due today are looked for, unless the trigger says a time.
pub const TASKS_DUE_AT: Time = Time::constant(8, 0, 0, 0);

fn time(text: &str) -> anyhow::Result<Time> {
    for format in ["%H:%M", "%H:%M:%S", "%I:%M%p", "%I%p"] {
        if let Ok(t) = Time::strptime(format, text.to_uppercase()) {
            return Ok(t);
        }
    }
    bail!("{text:?} is not a time of day: write it as 07:30 (or 7:30am)")
}

fn weekday(text: &str) -> anyhow::Result<Weekday> {
    let days = [
        ("monday", Weekday::Monday),
        ("tuesday", Weekday::Tuesday),
        ("wednesday", Weekday::Wednesday),
        ("thursday", Weekday::Thursday),
        ("friday", Weekday::Friday),
        ("saturday", Weekday::Saturday),
        ("sunday", Weekday::Sunday),
    ];
    let text = text.trim_end_matches('s');
    days.iter()
        .find(|(name, _)| text.len() >= 3 && name.starts_with(text))
        .map(|(_, day)| *day)
        .with_context(|| format!("{text:?} is not a day of the week (monday ... sunday, or mon ... sun)"))
}

/// The words of a schedule or trigger, lower case, without the fillers `at`, `on` and `every` after the first.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(str::to_lowercase)
        .filter(|w| w != "at" && w != "on")
        .collect()
}

impl std::str::FromStr for Schedule {
    type Err = anyhow::Error;

    /// `daily 07:30`, `daily at 7:30am`, `weekly monday 09:00`, `weekly on mon at 09:00`, `every 6 hours`, `every 6h`,
    /// `every 30 minutes`, `every 30m`, `hourly`.
    fn from_str(text: &str) -> anyhow::Result<Schedule> {
        let words = words(text);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let schedule = match words.as_slice() {
            ["daily", t] => Schedule::Daily(time(t)?),
            ["weekly", day, t] => Schedule::Weekly(weekday(day)?, time(t)?),
            ["hourly"] | ["every", "hour"] => Schedule::Every(60),
            ["every", "day"] => bail!("{text:?}: write daily HH:MM (daily 07:30)"),
            ["every", "week"] => bail!("{text:?}: write weekly DAY HH:MM (weekly monday 09:00)"),
            ["every", amount] | ["every", amount, _] => {
                let (number, unit) = match words.as_slice() {
                    [_, _, unit] => (*amount, *unit),
                    _ => {
                        let split = amount.find(|c: char| !c.is_ascii_digit()).unwrap_or(amount.len());
                        amount.split_at(split)
                    }
                };
                let n: u32 = number
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .with_context(|| format!("{text:?}: how many hours or minutes? (every 6 hours)"))?;
                let minutes = match unit {
                    "h" | "hour" | "hours" => n.saturating_mul(60),
                    "m" | "min" | "minute" | "minutes" => n,
                    "d" | "day" | "days" => n.saturating_mul(1440),
                    _ => bail!("{text:?}: every N hours, or every N minutes"),
                };
                if minutes < 5 {
                    bail!("{text:?}: an automation runs at most every 5 minutes");
                }
                if minutes > 7 * 1440 {
                    bail!("{text:?}: at most every 7 days; for longer, weekly DAY HH:MM, or a run by hand from cron");
                }
                Schedule::Every(minutes)
            }
            _ => bail!(
                "{text:?} is not a schedule: write daily 07:30, weekly monday 09:00, every 6 hours or every 30 minutes"
            ),
        };
        Ok(schedule)
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Daily(t) => write!(f, "daily at {}", clock(*t)),
            Schedule::Weekly(day, t) => write!(f, "weekly on {day:?} at {}", clock(*t)),
            Schedule::Every(m) if m % 60 == 0 => write!(f, "every {} hours", m / 60),
            Schedule::Every(m) => write!(f, "every {m} minutes"),
        }
    }
}

impl std::str::FromStr for Trigger {
    type Err = anyhow::Error;

    /// `note created`, `note changed`, `tag added`, `tag added #inbox`, `task due`, `task due at 07:00`.
    fn from_str(text: &str) -> anyhow::Result<Trigger> {
        let words = words(text);
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        Ok(match words.as_slice() {
            ["note", "created"] | ["created"] => Trigger::NoteCreated,
            ["note", "changed"] | ["changed"] => Trigger::NoteChanged,
            ["tag", "added"] | ["tagged"] => Trigger::TagAdded(None),
            ["tag", "added", tag] | ["tagged", tag] => {
                let tag = tag.trim_start_matches('#');
                if tag.is_empty() {
                    bail!("{text:?}: which tag? (tag added #inbox)");
                }
                Trigger::TagAdded(Some(tag.to_owned()))
            }
            ["task", "due"] | ["tasks", "due"] => Trigger::TaskDue(TASKS_DUE_AT),
            ["task", "due", t] | ["tasks", "due", t] => Trigger::TaskDue(time(t)?),
            _ => bail!(
                "{text:?} is not a trigger: write note created, note changed, tag added, tag added #NAME or task due"
            ),
        })
    }
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trigger::NoteCreated => write!(f, "when a note is created"),
            Trigger::NoteChanged => write!(f, "when a note is created or changed"),
            Trigger::TagAdded(None) => write!(f, "when a tag is added"),
            Trigger::TagAdded(Some(tag)) => write!(f, "when #{tag} is added"),
            Trigger::TaskDue(t) => write!(f, "at {} when tasks are due that day", clock(*t)),
        }
    }
}

/// A time of day as people read it: to the minute, to the second when it has seconds.
fn clock(t: Time) -> String {
    let format = if t.second() == 0 { "%H:%M" } else { "%H:%M:%S" };
    t.strftime(format).to_string()
}

/// A slot: the time a schedule runs at, and its key in the run log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// When, in this computer's time zone.
    pub at: Zoned,
    /// Its key: the local time, to the second.
    pub key: String,
}

impl Slot {
    fn of(at: DateTime, tz: &jiff::tz::TimeZone) -> anyhow::Result<Slot> {
        let at = at.to_zoned(tz.clone())?;
        let key = at.strftime("%Y-%m-%dT%H:%M:%S").to_string();
        Ok(Slot { at, key })
    }
}

impl Schedule {
    /// The latest slot at or before `now`.
    pub fn latest(&self, now: &Zoned) -> anyhow::Result<Slot> {
        let tz = now.time_zone();
        let today: Date = now.date();
        let at = match *self {
            Schedule::Daily(t) => {
                let at = today.to_datetime(t);
                if at > now.datetime() {
                    at.checked_sub(1.day())?
                } else {
                    at
                }
            }
            Schedule::Weekly(day, t) => {
                let back = i64::from(today.weekday().since(day));
                let at = today.checked_sub(back.days())?.to_datetime(t);
                if at > now.datetime() {
                    at.checked_sub(7.days())?
                } else {
                    at
                }
            }
            Schedule::Every(minutes) => {
                let step = i64::from(minutes);
                if 1440 % step == 0 {
                    let since_midnight = i64::from(now.hour()) * 60 + i64::from(now.minute());
                    today
                        .to_datetime(Time::midnight())
                        .checked_add((since_midnight / step * step).minutes())?
                } else {
                    let epoch_minutes = now.timestamp().as_second().div_euclid(60);
                    let start = jiff::Timestamp::from_second(epoch_minutes / step * step * 60)?;
                    start.to_zoned(tz.clone()).datetime()
                }
            }
        };
        Slot::of(at, tz)
    }

    /// The first slot after `now`.
    pub fn next(&self, now: &Zoned) -> anyhow::Result<Slot> {
        let latest = self.latest(now)?;
        let step = match *self {
            Schedule::Daily(_) => 1.day(),
            Schedule::Weekly(..) => 7.days(),
            Schedule::Every(minutes) => i64::from(minutes).minutes(),
        };
        let mut at = latest.at.datetime().checked_add(step)?;
        // A step of minutes from midnight ends at the next midnight.
        if let Schedule::Every(minutes) = *self
            && 1440 % i64::from(minutes) == 0
            && at.date() != latest.at.date()
        {
            at = at.date().to_datetime(Time::midnight());
        }
        Slot::of(at, now.time_zone())
    }
}

impl Trigger {
    /// The day's slot of a task-due trigger at or before `now` (the others have none: news starts them).
    pub fn latest(&self, now: &Zoned) -> anyhow::Result<Option<Slot>> {
        match self {
            Trigger::TaskDue(t) => Schedule::Daily(*t).latest(now).map(Some),
            _ => Ok(None),
        }
    }

    /// The next day's slot of a task-due trigger after `now`.
    pub fn next(&self, now: &Zoned) -> anyhow::Result<Option<Slot>> {
        match self {
            Trigger::TaskDue(t) => Schedule::Daily(*t).next(now).map(Some),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Zoned {
        format!("{text}[Europe/Paris]").parse().unwrap()
    }

    #[test]
    fn schedules_and_triggers_read_as_people_write_them() {
        let daily: Schedule = "daily at 7:30am".parse().unwrap();
        assert_eq!(daily, Schedule::Daily(Time::constant(7, 30, 0, 0)));
        assert_eq!(
            "weekly on mon at 09:00".parse::<Schedule>().unwrap(),
            Schedule::Weekly(Weekday::Monday, Time::constant(9, 0, 0, 0))
        );
        assert_eq!("every 6 hours".parse::<Schedule>().unwrap(), Schedule::Every(360));
        assert_eq!("every 30m".parse::<Schedule>().unwrap(), Schedule::Every(30));
        assert_eq!("Every 2h".parse::<Schedule>().unwrap().to_string(), "every 2 hours");
        assert_eq!("every hour".parse::<Schedule>().unwrap(), Schedule::Every(60));
        for bad in [
            "every 10000 hours",
            "daily",
            "daily 25:00",
            "weekly funday 09:00",
            "every 1 minute",
            "every hours",
            "sometimes",
        ] {
            assert!(bad.parse::<Schedule>().is_err(), "{bad}");
        }
        assert_eq!(
            "tag added #inbox".parse::<Trigger>().unwrap(),
            Trigger::TagAdded(Some("inbox".into()))
        );
        assert_eq!(
            "task due at 07:00".parse::<Trigger>().unwrap(),
            Trigger::TaskDue(Time::constant(7, 0, 0, 0))
        );
        assert!("note deleted".parse::<Trigger>().is_err());
    }

    #[test]
    fn slots_are_the_last_time_at_or_before_now_and_the_next_after_it() {
        let daily = Schedule::Daily(Time::constant(7, 30, 0, 0));
        assert_eq!(
            daily.latest(&at("2026-12-07T07:29:59")).unwrap().key,
            "2026-12-06T07:30:00"
        );
        assert_eq!(
            daily.latest(&at("2026-12-07T07:30:00")).unwrap().key,
            "2026-12-07T07:30:00"
        );
        assert_eq!(
            daily.next(&at("2026-12-07T07:30:00")).unwrap().key,
            "2026-12-08T07:30:00"
        );
        let weekly = Schedule::Weekly(Weekday::Monday, Time::constant(9, 0, 0, 0));
        // 2026-12-07 is a Monday.
        assert_eq!(
            weekly.latest(&at("2026-12-07T08:00:00")).unwrap().key,
            "2026-11-30T09:00:00"
        );
        assert_eq!(
            weekly.latest(&at("2026-12-09T08:00:00")).unwrap().key,
            "2026-12-07T09:00:00"
        );
        assert_eq!(
            weekly.next(&at("2026-12-09T08:00:00")).unwrap().key,
            "2026-12-14T09:00:00"
        );
        let six = Schedule::Every(360);
        assert_eq!(
            six.latest(&at("2026-12-07T13:10:00")).unwrap().key,
            "2026-12-07T12:00:00"
        );
        assert_eq!(six.next(&at("2026-12-07T19:10:00")).unwrap().key, "2026-12-08T00:00:00");
        // 7 hours do not divide a day: counted from the epoch, the same in every process.
        let seven = Schedule::Every(420);
        let latest = seven.latest(&at("2026-12-07T13:10:00")).unwrap();
        let next = seven.next(&at("2026-12-07T13:10:00")).unwrap();
        assert_eq!(
            next.at.timestamp().as_second() - latest.at.timestamp().as_second(),
            7 * 3600
        );
        assert!(latest.at <= at("2026-12-07T13:10:00") && next.at > at("2026-12-07T13:10:00"));
    }

    #[test]
    fn a_day_that_skips_an_hour_still_has_its_slot() {
        // 2026-03-29 in Paris goes from 02:00 to 03:00.
        let daily = Schedule::Daily(Time::constant(2, 30, 0, 0));
        let slot = daily.latest(&at("2026-03-29T12:00:00")).unwrap();
        assert_eq!(slot.at.date(), jiff::civil::date(2026, 3, 29));
    }
}
