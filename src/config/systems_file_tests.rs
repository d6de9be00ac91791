//! Tests of the systems file: the examples shipped in the repository, what
//! it translates into, and every refusal naming the file and the fix.

use super::*;
use crate::cli::{Cli, Command};
use clap::Parser;

fn base() -> SystemOptions {
    match Cli::try_parse_from(["continuity-bench", "run"])
        .unwrap()
        .command
    {
        Command::Run(a) => a.systems,
        _ => unreachable!(),
    }
}

fn parse(text: &str) -> Result<SystemsFile, SystemsFileError> {
    SystemsFile::parse(Path::new("sys.toml"), text, &base())
}

fn root(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn the_builtin_example_runs_both_reference_proxies_and_marks_the_control() {
    let file = SystemsFile::read(&root("examples/systems/builtin.toml"), &base()).unwrap();
    let names: Vec<&str> = file.systems.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["stateless", "history"]);
    assert!(!file.options.no_builtin);
    assert!(file.options.gateways.is_empty());
    assert!(file.get("stateless").unwrap().control);
    assert!(!file.get("history").unwrap().control);
    assert!(!file.get("history").unwrap().notes.is_empty());
}

/// The page of every system: each gateway on its own upstream ports, the
/// Rust gateways asked for the model ids they route on, the others for
/// the file's.
#[test]
fn the_all_systems_example_asks_each_gateway_for_its_own_model() {
    let file = SystemsFile::read(&root("examples/systems/all.toml"), &base()).unwrap();
    let names: Vec<&str> = file.systems.iter().map(|s| s.name.as_str()).collect();
    for name in [
        "stateless",
        "history",
        "litellm",
        "portkey",
        "nullplatform",
        "tensorzero",
        "helicone",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert_eq!(file.options.model, "continuity-sim");
    let mut models = file.options.gateway_models.clone();
    models.sort();
    assert_eq!(
        models,
        [
            "helicone=groq/continuity-sim",
            "tensorzero=tensorzero::model_name::continuity-sim"
        ]
    );
    let gateways = crate::config::parse_gateways(&file.options, &|_| Some("v".into())).unwrap();
    let mut ports: Vec<u16> = gateways
        .iter()
        .flat_map(|g| [g.primary_port, g.fallback_port])
        .collect();
    let n = ports.len();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports.len(), n, "every upstream port once");
}

#[test]
fn the_gateway_examples_translate_into_the_flags_compare_sh_passes() {
    let file = SystemsFile::read(&root("examples/gateways/systems.toml"), &base()).unwrap();
    assert_eq!(
        file.options.gateways,
        [
            "litellm=http://127.0.0.1:4000",
            "portkey=http://127.0.0.1:8787"
        ]
    );
    assert_eq!(
        file.options.upstream_ports,
        ["litellm=9001,9002", "portkey=9011,9012"]
    );
    assert_eq!(
        file.options.headers,
        [
            "litellm:Authorization=env:LITELLM_AUTH",
            "portkey:x-portkey-config=env:PORTKEY_CONFIG"
        ]
    );
    assert!(
        !file.options.no_builtin,
        "the reference systems run beside them"
    );
    assert_eq!(file.get("litellm").unwrap().header_names, ["Authorization"]);
}

#[test]
fn a_file_of_gateways_only_runs_no_builtin() {
    let file = parse(
        r#"
        model = "m1"
        gateway_wait = "5s"
        [[system]]
        name = "gw"
        url = "http://127.0.0.1:4000"
        model = "m1"
        notes = "  mine  "
        "#,
    )
    .unwrap();
    assert!(file.options.no_builtin);
    assert_eq!(file.options.model, "m1");
    assert_eq!(file.options.gateway_wait, std::time::Duration::from_secs(5));
    assert_eq!(
        file.systems[0].kind,
        SystemKind::Gateway("http://127.0.0.1:4000".into())
    );
    assert_eq!(file.systems[0].notes, "mine");
}

/// A gateway that names its models its own way is asked for its own
/// model; every other system for the file's; a model every system shares
/// is the run's, as before.
#[test]
fn a_gateway_s_own_model_is_asked_of_it_alone() {
    let file = parse(
        r#"
        model = "continuity-sim"
        [[system]]
        name = "tensorzero"
        url = "http://127.0.0.1:3000/openai"
        model = "tensorzero::model_name::continuity-sim"
        [[system]]
        name = "litellm"
        url = "http://127.0.0.1:4000"
        "#,
    )
    .unwrap();
    assert_eq!(file.options.model, "continuity-sim");
    assert_eq!(
        file.options.gateway_models,
        ["tensorzero=tensorzero::model_name::continuity-sim"]
    );
    let systems = crate::config::systems_config(&file.options).unwrap();
    let model_of = |name: &str| {
        systems
            .gateways
            .iter()
            .find(|g| g.name == name)
            .unwrap()
            .model
            .clone()
    };
    assert_eq!(
        model_of("tensorzero").as_deref(),
        Some("tensorzero::model_name::continuity-sim")
    );
    assert_eq!(model_of("litellm"), None);
    let shared = parse(
        "[[system]]\nname = \"a\"\nurl = \"http://x\"\nmodel = \"m9\"\n[[system]]\nname = \"b\"\nurl = \"http://y\"\nmodel = \"m9\"\n",
    )
    .unwrap();
    assert_eq!(shared.options.model, "m9");
    assert!(shared.options.gateway_models.is_empty());
}

#[test]
fn refusals_name_the_file_the_system_and_the_fix() {
    let cases: &[(&str, &str)] = &[
        ("", "lists no system"),
        ("[[system]]\nname = \"a\"\n", "give builtin"),
        (
            "[[system]]\nname = \"a\"\nbuiltin = \"history\"\nurl = \"http://x\"\n",
            "not both",
        ),
        ("[[system]]\nname = \"history\"\nbuiltin = \"history\"\n", "list both or neither"),
        ("[[system]]\nname = \"h\"\nbuiltin = \"history\"\n", "keeps its own name"),
        ("[[system]]\nname = \"x\"\nbuiltin = \"smart\"\n", "no reference proxy"),
        ("[[system]]\nname = \"a b\"\nurl = \"http://x\"\n", "a name is letters"),
        ("[[system]]\nname = \"a\"\nurl = \"ftp://x\"\n", "not an http://"),
        (
            "[[system]]\nname = \"a\"\nurl = \"http://x\"\n[[system]]\nname = \"a\"\nurl = \"http://y\"\n",
            "two systems are named",
        ),
        (
            "model = \"m1\"\n[[system]]\nname = \"stateless\"\nbuiltin = \"stateless\"\nmodel = \"m2\"\n[[system]]\nname = \"history\"\nbuiltin = \"history\"\n",
            "a reference proxy is asked for the run's model",
        ),
        ("[[system]]\nname = \"a\"\nurl = \"http://x\"\ncolour = 1\n", "colour"),
        ("[[system]]\nname = \"a\"\nurl = \"http://x\"\nheaders = { \"A:B\" = \"v\" }\n", "not a header name"),
        ("[[system]]\nname = \"a\"\nurl = \"http://x\"\nheaders = { A = \"\" }\n", "empty value"),
        ("gateway_wait = \"soon\"\n[[system]]\nname = \"a\"\nurl = \"http://x\"\n", "not a duration"),
        ("api = \"assistants\"\n[[system]]\nname = \"a\"\nurl = \"http://x\"\n", "write \"chat\" or \"responses\""),
        ("[[system]\nname = 1\n", "line 1"),
    ];
    for (text, expected) in cases {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains("--systems sys.toml"), "{text:?}: {err}");
        assert!(err.contains(expected), "{text:?}: {err}");
    }
}

#[test]
fn the_file_sets_the_api_for_every_system_and_only_run_takes_responses() {
    let text = "api = \"responses\"\n[[system]]\nname = \"a\"\nurl = \"http://x\"\n";
    let file = parse(text).unwrap();
    assert_eq!(file.options.api, crate::cli::ApiArg::Responses);
    let systems = crate::config::systems_config(&file.options).unwrap();
    assert_eq!(systems.api, crate::client::Api::Responses);
    assert_eq!(
        parse(&text[18..]).unwrap().options.api,
        crate::cli::ApiArg::Chat
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap();
    for (argv, expected) in [
        (
            vec!["semantics", "--systems", path],
            "is `run` only: `semantics`",
        ),
        (vec!["grade", "--systems", path], "is `run` only: `grade`"),
        (
            vec!["run", "--systems", path, "--stream"],
            "cannot be combined with --stream",
        ),
        (
            vec!["run", "--api", "responses", "--fast-forward"],
            "cannot be combined with --fast-forward",
        ),
    ] {
        let cli =
            Cli::try_parse_from(std::iter::once("continuity-bench").chain(argv.iter().copied()))
                .unwrap();
        let err = match cli.command {
            Command::Semantics(a) => crate::config::semantics_config(&a).unwrap_err().to_string(),
            Command::Grade(a) => crate::config::grade_config(&a, time::OffsetDateTime::UNIX_EPOCH)
                .unwrap_err()
                .to_string(),
            Command::Run(a) => crate::config::run_config(&a, time::OffsetDateTime::UNIX_EPOCH)
                .unwrap_err()
                .to_string(),
            _ => unreachable!(),
        };
        assert!(err.contains(expected), "{argv:?}: {err}");
    }
}

#[test]
fn a_missing_environment_variable_names_the_file_and_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "[[system]]\nname = \"gw\"\nurl = \"http://127.0.0.1:4000\"\nheaders = { Authorization = \"env:CB_TEST_UNSET_VARIABLE_26\" }\n",
    )
    .unwrap();
    let mut options = base();
    options.systems = Some(path.clone());
    let err = crate::config::systems_config(&options)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("CB_TEST_UNSET_VARIABLE_26"), "{err}");
}

#[test]
fn a_literal_header_value_never_reaches_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "[[system]]\nname = \"gw\"\nurl = \"http://127.0.0.1:4000\"\nheaders = { Authorization = \"Bearer sk-verysecret\\n\" }\n",
    )
    .unwrap();
    let mut options = base();
    options.systems = Some(path);
    let err = crate::config::systems_config(&options)
        .unwrap_err()
        .to_string();
    assert!(err.contains("line break"), "{err}");
    assert!(!err.contains("verysecret"), "{err}");
}

#[test]
fn systems_replaces_the_system_flags_in_run_semantics_and_grade() {
    for command in ["run", "semantics", "grade"] {
        let ok = Cli::try_parse_from(["continuity-bench", command, "--systems", "f.toml"]);
        assert!(ok.is_ok(), "{command}: {:?}", ok.err());
        for flag in [
            &["--gateway", "a=http://x"][..],
            &["--no-builtin"][..],
            &["--header", "a:B=c"][..],
        ] {
            let mut argv = vec!["continuity-bench", command, "--systems", "f.toml"];
            argv.extend_from_slice(flag);
            let err = Cli::try_parse_from(argv).unwrap_err().to_string();
            assert!(
                err.contains("cannot be used with"),
                "{command} {flag:?}: {err}"
            );
        }
    }
}

#[test]
fn an_oversized_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    std::fs::write(&path, vec![b'#'; (MAX_FILE_BYTES + 1) as usize]).unwrap();
    let err = SystemsFile::read(&path, &base()).unwrap_err().to_string();
    assert!(err.contains("more than a systems file holds"), "{err}");
    let err = SystemsFile::read(&dir.path().join("none.toml"), &base())
        .unwrap_err()
        .to_string();
    assert!(err.contains("examples/systems/builtin.toml"), "{err}");
}

fn canary_args(argv: &[&str]) -> crate::cli::CanaryRunArgs {
    let mut full = vec!["continuity-bench", "canary"];
    full.extend_from_slice(argv);
    match Cli::try_parse_from(full).unwrap().command {
        Command::Canary(a) => a.run,
        _ => unreachable!(),
    }
}

#[test]
fn canary_takes_its_endpoint_key_and_model_from_the_one_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "[[system]]\nname = \"stateless\"\nbuiltin = \"stateless\"\n[[system]]\nname = \"history\"\nbuiltin = \"history\"\n\
         [[system]]\nname = \"or\"\nurl = \"https://openrouter.example/api/v1\"\nkey_env = \"CB_TEST_KEY_26\"\nmodel = \"meta-llama/llama-3.3-70b-instruct\"\n",
    )
    .unwrap();
    let args = canary_args(&["--systems", path.to_str().unwrap(), "--rounds", "1"]);
    let resolved = canary_args_of(&path, &args);
    assert_eq!(
        resolved.endpoint.as_deref(),
        Some("https://openrouter.example/api/v1")
    );
    assert_eq!(resolved.key_env, "CB_TEST_KEY_26");
    assert_eq!(resolved.model, "meta-llama/llama-3.3-70b-instruct");
    // The key is read from the variable the file names.
    let env = |var: &str| (var == "CB_TEST_KEY_26").then(|| "sk-test-key-value".to_string());
    let config = crate::config::canary_config(&args, &env, time::OffsetDateTime::UNIX_EPOCH);
    assert!(config.is_ok(), "{:?}", config.err());
    let none = |_: &str| None;
    let err = crate::config::canary_config(&args, &none, time::OffsetDateTime::UNIX_EPOCH)
        .unwrap_err()
        .to_string();
    assert!(err.contains("CB_TEST_KEY_26"), "{err}");

    let two = dir.path().join("two.toml");
    std::fs::write(
        &two,
        "[[system]]\nname = \"a\"\nurl = \"http://x\"\n[[system]]\nname = \"b\"\nurl = \"http://y\"\n",
    )
    .unwrap();
    let err = super::canary_args(&two, &args).unwrap_err().to_string();
    assert!(
        err.contains("one endpoint") && err.contains("a, b"),
        "{err}"
    );
    let conflict = Cli::try_parse_from([
        "continuity-bench",
        "canary",
        "--systems",
        "f",
        "--endpoint",
        "http://x",
    ]);
    assert!(conflict.is_err());
}

fn canary_args_of(path: &Path, args: &crate::cli::CanaryRunArgs) -> crate::cli::CanaryRunArgs {
    super::canary_args(path, args).unwrap()
}
