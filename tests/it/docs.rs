//! The README and the book (`docs/`) checked as a reader follows them:
//! every relative link resolves to a file (and a `#fragment` in a Markdown
//! file to one of its headings), `docs/SUMMARY.md` lists every chapter file
//! and every file it lists exists. A link that breaks when a file moves
//! fails here, not in a reader's browser.

use crate::common::repo;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A link found in a Markdown file: its line and its target as written.
#[derive(Debug, PartialEq, Eq)]
struct Link {
    line: usize,
    target: String,
}

/// The inline links `[text](target)` and images of a Markdown text, outside
/// fenced code blocks and inline code spans.
fn links(markdown: &str) -> Vec<Link> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Blank inline code spans so that `[a](b)` inside backticks is text.
        let mut plain = String::with_capacity(line.len());
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                plain.push(' ');
            } else {
                plain.push(if in_code { ' ' } else { c });
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push(Link {
                line: i + 1,
                target: target.to_string(),
            });
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor of a heading: lower case, punctuation dropped but `-`
/// and `_`, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings (outside code blocks).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// What is wrong with the relative links of the Markdown file `file` (under
/// `root`), one line each; nothing when every one resolves.
fn broken_links(root: &Path, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut broken = Vec::new();
    for link in links(&text) {
        let target = link.target.as_str();
        if target.is_empty()
            || target.contains("://")
            || target.starts_with("mailto:")
            || target.starts_with('<')
        {
            continue;
        }
        let (path, fragment) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target, None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            normalize(&dir.join(path))
        };
        let shown = format!("{}:{}: {target}", file.display(), link.line);
        if resolved.starts_with("..") {
            broken.push(format!("{shown} leaves the repository"));
            continue;
        }
        if !root.join(&resolved).exists() {
            broken.push(format!("{shown} (no file {})", resolved.display()));
            continue;
        }
        let is_markdown = resolved.extension().is_some_and(|e| e == "md");
        if let (Some(fragment), true) = (fragment, is_markdown) {
            let target_text = std::fs::read_to_string(root.join(&resolved)).unwrap();
            if !anchors(&target_text).contains(fragment) {
                broken.push(format!(
                    "{shown} (no heading #{fragment} in {})",
                    resolved.display()
                ));
            }
        }
    }
    broken
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `README.md` and every Markdown file under `docs/`, relative to the
/// repository.
fn book_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| PathBuf::from("docs").join(e.unwrap().file_name()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    files.extend(chapters);
    files
}

#[test]
fn every_relative_link_in_the_readme_and_the_book_resolves() {
    let root = repo("");
    let mut broken = Vec::new();
    for file in book_files(&root) {
        broken.extend(broken_links(&root, &file));
    }
    assert!(
        broken.is_empty(),
        "broken links (fix the path, or the heading it points at):\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_summary_lists_every_chapter_and_every_listed_chapter_exists() {
    let root = repo("");
    let summary = std::fs::read_to_string(root.join("docs/SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary)
        .into_iter()
        .map(|l| l.target.split('#').next().unwrap_or("").to_string())
        .collect();
    let chapters: BTreeSet<String> = book_files(&root)
        .into_iter()
        .filter_map(|p| p.strip_prefix("docs").ok().map(Path::to_path_buf))
        .map(|p| p.display().to_string())
        .filter(|p| p != "SUMMARY.md")
        .collect();
    let unlisted: Vec<&String> = chapters.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "chapters in docs/ that docs/SUMMARY.md does not list (add a line for each): {unlisted:?}"
    );
    for chapter in &listed {
        assert!(
            root.join("docs").join(chapter).exists(),
            "docs/SUMMARY.md lists docs/{chapter}, which does not exist"
        );
    }
}

#[test]
fn the_link_check_catches_what_a_reader_would_trip_on() {
    // Positive controls: a missing file, a missing heading, a path out of
    // the repository; negative: links in code, external links, a good
    // fragment.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/a.md"), "# A\n\n## Two words\n").unwrap();
    std::fs::write(
        root.join("README.md"),
        "[ok](docs/a.md) [ok](docs/a.md#two-words) [x](https://e.x/n)\n\
         [gone](docs/gone.md)\n\
         `[code](docs/code.md)`\n\
         ```\n[fenced](docs/fenced.md)\n```\n\
         [bad anchor](docs/a.md#three)\n\
         [out](../outside.md) [self](#a)\n",
    )
    .unwrap();
    let broken = broken_links(root, Path::new("README.md"));
    assert_eq!(broken.len(), 4, "{broken:#?}");
    assert!(
        broken[0].contains("README.md:2: docs/gone.md"),
        "{broken:#?}"
    );
    assert!(broken[1].contains("no heading #three"), "{broken:#?}");
    assert!(broken[2].contains("leaves the repository"), "{broken:#?}");
    assert!(
        broken[3].contains("no heading #a in README.md"),
        "{broken:#?}"
    );
    assert_eq!(
        slug("Past one machine: `--shard K/N` and `report merge`"),
        "past-one-machine---shard-kn-and-report-merge"
    );
}

/// The semantics chapter's table of policies is the catalogue's own
/// (`cb_semantics::policy::table` over the full profile at the default
/// `--request-timeout` and give-up bounds): a case, a bound or a check the
/// code changes and the book does not fails here. `CB_WRITE_DOCS=1` writes
/// the table into the chapter instead.
#[test]
fn the_semantics_chapter_states_the_catalogue_s_own_policies() {
    use continuity_bench::semantics::catalogue::catalogue;
    use continuity_bench::semantics::policy::table;
    use continuity_bench::semantics::timing::{GiveUpBounds, Timing};
    let cases = catalogue(
        &Timing::full(std::time::Duration::from_secs(30)),
        &GiveUpBounds::default(),
        false,
    );
    let generated = table(&cases);
    let path = repo("docs/semantics.md");
    let chapter = std::fs::read_to_string(&path).unwrap();
    let (open, close) = ("<!-- catalogue:policy -->\n", "<!-- /catalogue:policy -->");
    let start = chapter
        .find(open)
        .expect("docs/semantics.md has the policy markers")
        + open.len();
    let end = chapter[start..].find(close).expect("the closing marker") + start;
    if std::env::var_os("CB_WRITE_DOCS").is_some() {
        let written = format!("{}{generated}{}", &chapter[..start], &chapter[end..]);
        std::fs::write(&path, written).unwrap();
        return;
    }
    assert!(
        chapter[start..end] == generated,
        "docs/semantics.md's table is not the catalogue's; run \
         `CB_WRITE_DOCS=1 cargo test --test it docs::the_semantics_chapter` to write it:\n{generated}"
    );
}
