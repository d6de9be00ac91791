//! Tests of the inline SVG charts: axes, legend placement, empty charts.

use super::*;

fn attr(svg: &str, from: usize, name: &str) -> f64 {
    let key = format!("{name}=\"");
    let at = svg[from..].find(&key).unwrap() + from + key.len();
    let end = svg[at..].find('"').unwrap() + at;
    svg[at..end].parse().unwrap()
}

#[test]
fn integer_ticks_are_whole_and_reach_the_maximum() {
    assert_eq!(integer_ticks(0), [0, 1]);
    assert_eq!(integer_ticks(1), [0, 1]);
    assert_eq!(integer_ticks(5), [0, 1, 2, 3, 4, 5]);
    assert_eq!(integer_ticks(9), [0, 2, 4, 6, 8, 10]);
    assert_eq!(integer_ticks(34), [0, 5, 10, 15, 20, 25, 30, 35]);
    let big = integer_ticks(12_345);
    assert!(big.len() <= 9 && *big.last().unwrap() >= 12_345, "{big:?}");
    assert!(big.windows(2).all(|w| w[1] - w[0] == big[1]));
}

#[test]
fn log_ticks_span_the_data_by_decades() {
    assert_eq!(
        log_ticks(20.0, 900.0),
        [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
    );
    assert_eq!(log_ticks(8.0, 1_013.0), [1.0, 10.0, 100.0, 1000.0, 10000.0]);
    // More than three decades: powers of ten only.
    assert_eq!(
        log_ticks(0.5, 20_000.0),
        [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]
    );
    // One value still gets an axis.
    assert_eq!(log_ticks(100.0, 100.0), [100.0, 200.0, 500.0, 1000.0]);
}

#[test]
fn an_empty_chart_says_why() {
    let svg = stacked_bars("Scorecard", "cases", &[], "the catalogue did not run");
    assert!(svg.contains("the catalogue did not run"), "{svg}");
    let zero = Bar {
        label: "a".into(),
        segments: vec![Segment {
            name: "fail".into(),
            value: 0,
            colour: "#f00".into(),
        }],
    };
    let svg = stacked_bars(
        "Violations",
        "answers",
        &[zero],
        "no answer broke a contract",
    );
    assert!(svg.contains("no answer broke a contract"));
    let svg = log_lines("Latency", "turns", "ms", &[], "no failover event");
    assert!(svg.contains("no failover event"));
}

#[test]
fn bars_have_integer_ticks_and_the_legend_right_of_the_plot() {
    let bars = vec![Bar {
        label: "history".into(),
        segments: vec![
            Segment {
                name: "pass".into(),
                value: 30,
                colour: "#0a0".into(),
            },
            Segment {
                name: "fail".into(),
                value: 4,
                colour: "#a00".into(),
            },
        ],
    }];
    let svg = stacked_bars("Scorecard <1>", "cases", &bars, "-");
    assert!(svg.contains("Scorecard &lt;1&gt;"), "escaped title");
    assert!(!svg.contains(".5<"), "no fractional tick: {svg}");
    assert!(
        svg.contains(">35</text>"),
        "the axis reaches past the total"
    );
    let bar_end = {
        let at = svg.rfind("<rect x=").unwrap();
        attr(&svg, at, "x") + attr(&svg, at, "width")
    };
    let legend_at = svg.find("class=\"legend\"").unwrap();
    assert!(
        attr(&svg, legend_at, "x1") > bar_end,
        "legend over the data"
    );
    assert!(attr(&svg, legend_at, "x1") > WIDTH - RIGHT);
}

#[test]
fn lines_sit_on_a_log_axis_and_drop_what_it_cannot_show() {
    let series = vec![
        Series {
            name: "median".into(),
            colour: "#00f".into(),
            dashed: false,
            points: vec![(7.0, 10.0), (8.0, 100.0), (9.0, 0.0)],
        },
        Series {
            name: "P95".into(),
            colour: "#00f".into(),
            dashed: true,
            points: vec![(7.0, 1000.0), (8.0, 1000.0)],
        },
    ];
    let svg = log_lines("Latency", "turns", "ms", &series, "-");
    assert!(svg.contains("(log scale)"));
    assert!(svg.contains("1 point(s) at 0 ms or below"));
    // 10 -> 100 -> 1000 are equally spaced on the axis.
    let line = svg.find("class=\"series\"").unwrap();
    let points = &svg[line..];
    let start = points.find("points=\"").unwrap() + 8;
    let end = start + points[start..].find('"').unwrap();
    let ys: Vec<f64> = points[start..end]
        .split(' ')
        .map(|p| p.split_once(',').unwrap().1.parse().unwrap())
        .collect();
    let p95_at = svg.find("stroke-dasharray=\"6 4\"").unwrap();
    let p95 = &svg[..p95_at];
    let p95_points = p95.rfind("points=\"").unwrap() + 8;
    let y1000: f64 = p95[p95_points..]
        .split(' ')
        .next()
        .unwrap()
        .split_once(',')
        .unwrap()
        .1
        .parse()
        .unwrap();
    assert!(
        ((ys[0] - ys[1]) - (ys[1] - y1000)).abs() < 0.2,
        "{ys:?} {y1000}"
    );
    assert!(
        svg.contains(">7</text>") && svg.contains(">8</text>"),
        "integer turns"
    );
}
