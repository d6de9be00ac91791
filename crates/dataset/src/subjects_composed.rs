//! Subjects only composed datasets use: large counts and dates spread over
//! centuries, where the curated subjects (tiles for a bathroom floor, next
//! year's dental check-up) cannot hold thousands of distinct values and stay
//! plausible. Appended to [`super::subjects::SUBJECTS`], so the simulated
//! model reads them like any other subject.

use super::compose::Compose;
use super::subjects::Subject;
use super::Category;

/// Words in a novel manuscript.
pub const NOVEL_WORDS: Subject = Subject {
    key: "novel_words",
    category: Category::Number,
    subject: "length of novel manuscript",
    pool: None,
    compose: Some(Compose::Count(100_000, 199_999)),
    statements: &[
        "My novel manuscript is {v} words long.",
        "The draft of my novel has reached {v} words.",
    ],
    probes: &[
        "How many words long is my novel manuscript?",
        "How many words has the draft of my novel reached?",
    ],
    answer: "Your novel manuscript is {v} words long.",
    unknown: "how long your novel manuscript is",
    distractors: &[
        (
            "The longest manuscript in my writing group runs to {d} words, and its author wants an agent. How do people find a literary agent?",
            "Research agents who represent the genre, follow their submission guidelines exactly, and send a short query letter with the opening chapters.",
        ),
        (
            "The fantasy epic I'm reading is {d} words long. How do I keep track of all the characters in a long book?",
            "Keep a short list of names with a line about each as you meet them, or look for a character guide at the front of the book.",
        ),
    ],
};

/// Miles on the family car.
pub const CAR_MILEAGE: Subject = Subject {
    key: "car_mileage",
    category: Category::Number,
    subject: "mileage of the car",
    pool: None,
    compose: Some(Compose::Count(100_000, 249_999)),
    statements: &[
        "Our car has {v} miles on the clock.",
        "The odometer on our car reads {v} miles.",
    ],
    probes: &[
        "How many miles are on our car's clock?",
        "What does the odometer on our car read?",
    ],
    answer: "Your car has {v} miles on the clock.",
    unknown: "how many miles are on your car's clock",
    distractors: &[
        (
            "The van my neighbour is selling has {d} miles on it. What should I check before buying a used van?",
            "Look at the service history, check for rust and leaks, test the brakes and clutch on a drive, and have a mechanic inspect it if you can.",
        ),
        (
            "My uncle's old estate has done {d} miles and still runs. How do you keep an old car going?",
            "Regular oil changes, fixing small problems early, keeping it clean underneath and driving it gently until the engine is warm.",
        ),
    ],
};

/// Steps walked last month.
pub const MONTHLY_STEPS: Subject = Subject {
    key: "monthly_steps",
    category: Category::Number,
    subject: "steps walked last month",
    pool: None,
    compose: Some(Compose::Count(150_000, 499_999)),
    statements: &[
        "My step counter says I walked {v} steps last month.",
        "Last month I walked {v} steps, according to my step counter.",
    ],
    probes: &[
        "How many steps did I walk last month?",
        "What did my step counter say for last month?",
    ],
    answer: "You walked {v} steps last month.",
    unknown: "how many steps you walked last month",
    distractors: &[
        (
            "A colleague of mine logged {d} steps last month and won the office challenge. Is walking enough exercise on its own?",
            "For general health it goes a long way, especially at a brisk pace. Adding some strength exercises twice a week rounds it out.",
        ),
        (
            "The charity walk I signed up for adds up to {d} steps in total. How do I break in new walking shoes?",
            "Wear them around the house first, then on short walks, and build up the distance over a couple of weeks. Good socks help prevent blisters.",
        ),
    ],
};

/// Money raised by a village fundraiser.
pub const FUNDRAISER: Subject = Subject {
    key: "village_fundraiser",
    category: Category::Number,
    subject: "amount raised by the village fundraiser",
    pool: None,
    compose: Some(Compose::Count(100_000, 999_999)),
    statements: &[
        "Our village fundraiser has raised {v} pounds so far.",
        "So far our village fundraiser has brought in {v} pounds.",
    ],
    probes: &[
        "How much has our village fundraiser raised so far?",
        "How many pounds has our village fundraiser brought in?",
    ],
    answer: "Your village fundraiser has raised {v} pounds so far.",
    unknown: "how much your village fundraiser has raised",
    distractors: &[
        (
            "The school down the road raised {d} pounds for its new playground. How do you thank donors properly?",
            "Thank them promptly and personally, tell them what their money achieved, and invite them to see the result if you can.",
        ),
        (
            "A local charity needs {d} pounds to restore the old bandstand. How do small charities usually raise money?",
            "Events, grants from trusts and councils, sponsorship from local businesses and regular small donations usually make up most of it.",
        ),
    ],
};

/// An ancestor's baptism in the parish register.
pub const PARISH_BAPTISM: Subject = Subject {
    key: "parish_baptism",
    category: Category::Date,
    subject: "date of ancestor's baptism",
    pool: None,
    compose: Some(Compose::Date(1600, 1699)),
    statements: &[
        "The parish register records my ancestor's baptism on {v}.",
        "According to the parish register, my ancestor was baptised on {v}.",
    ],
    probes: &[
        "When was my ancestor baptised, according to the parish register?",
        "What date does the parish register give for my ancestor's baptism?",
    ],
    answer: "The parish register records your ancestor's baptism on {v}.",
    unknown: "when your ancestor was baptised",
    distractors: &[
        (
            "A distant relative found a baptism in another branch of the family on {d}. How do I start tracing my family tree?",
            "Start with what relatives know, then work back through birth, marriage and death records and census returns, noting your sources as you go.",
        ),
        (
            "The oldest entry in the county archive's register is dated {d}. How do archives keep old paper from falling apart?",
            "They store it cool, dry and dark in acid-free boxes, limit handling, and make digital copies so the originals rarely need to be touched.",
        ),
    ],
};

/// The oldest gravestone in the churchyard.
pub const GRAVESTONE: Subject = Subject {
    key: "oldest_gravestone",
    category: Category::Date,
    subject: "date on the oldest gravestone",
    pool: None,
    compose: Some(Compose::Date(1700, 1799)),
    statements: &[
        "The oldest gravestone in our village churchyard is dated {v}.",
        "In our village churchyard, the oldest gravestone is dated {v}.",
    ],
    probes: &[
        "What date is on the oldest gravestone in our village churchyard?",
        "What's the date on the oldest gravestone in our village churchyard?",
    ],
    answer: "The oldest gravestone in your village churchyard is dated {v}.",
    unknown: "the date on the oldest gravestone in your village churchyard",
    distractors: &[
        (
            "A churchyard in the next valley has a headstone dated {d} that people come to photograph. How do you clean an old headstone safely?",
            "Gently, with clean water and a soft brush only. Chemicals and pressure washers damage the stone, so leave anything more to a conservator.",
        ),
        (
            "A neighbour is researching a family grave dated {d}. How do people read worn inscriptions?",
            "Light from a torch held low to one side often brings worn letters out, and photographs from several angles help too.",
        ),
    ],
};

/// The deeds of the family cottage.
pub const COTTAGE_DEEDS: Subject = Subject {
    key: "cottage_deeds",
    category: Category::Date,
    subject: "date of the cottage deeds",
    pool: None,
    compose: Some(Compose::Date(1800, 1889)),
    statements: &[
        "The deeds to our cottage are dated {v}.",
        "Our cottage's original deeds are dated {v}.",
    ],
    probes: &[
        "What's the date on the deeds to our cottage?",
        "When were the deeds to our cottage drawn up?",
    ],
    answer: "The deeds to your cottage are dated {v}.",
    unknown: "the date on the deeds to your cottage",
    distractors: &[
        (
            "The farmhouse across the lane has deeds dated {d}, and the owners are selling. What should buyers check in a very old house?",
            "Damp, the roof, the timbers, the wiring and whether the building is listed, which limits what you can change.",
        ),
        (
            "An acquaintance found deeds dated {d} in her loft. Should old documents like that go to an archive?",
            "A local record office is usually glad to see them; it can copy or keep them safely and tell her more about the property's history.",
        ),
    ],
};

/// A great-grandmother's date of birth.
pub const GREAT_GRANDMOTHER_BORN: Subject = Subject {
    key: "great_grandmother_born",
    category: Category::Date,
    subject: "great-grandmother's date of birth",
    pool: None,
    compose: Some(Compose::Date(1890, 1934)),
    statements: &[
        "My great-grandmother was born on {v}.",
        "My great-grandmother's birth certificate says she was born on {v}.",
    ],
    probes: &[
        "When was my great-grandmother born?",
        "What's my great-grandmother's date of birth?",
    ],
    answer: "Your great-grandmother was born on {v}.",
    unknown: "when your great-grandmother was born",
    distractors: &[
        (
            "My neighbour's grandfather was born on {d} and still tells stories about his childhood. How do I record an older relative's memories?",
            "Ask open questions about places, people and everyday life, record on your phone in a quiet room, and keep sessions short so they don't tire.",
        ),
        (
            "The oldest person in our town was born on {d}. What do very long-lived people tend to have in common?",
            "Studies point to staying active, strong social ties, a sense of purpose and, to a large extent, lucky genes.",
        ),
    ],
};

/// The grandparents' wedding day.
pub const GRANDPARENTS_MARRIED: Subject = Subject {
    key: "grandparents_married",
    category: Category::Date,
    subject: "grandparents' wedding date",
    pool: None,
    compose: Some(Compose::Date(1935, 1979)),
    statements: &[
        "My grandparents got married on {v}.",
        "My grandparents' wedding was on {v}, and they still dance every Saturday.",
    ],
    probes: &[
        "When did my grandparents get married?",
        "What's the date of my grandparents' wedding?",
    ],
    answer: "Your grandparents got married on {v}.",
    unknown: "when your grandparents got married",
    distractors: &[
        (
            "Our neighbours got married on {d} and are planning a big anniversary party. What's a good gift for a long marriage?",
            "Something personal works well: a photo book of their years together, a framed print of where they married, or a meal with family.",
        ),
        (
            "A couple from my book club married on {d} and renewed their vows last year. How do people plan a vow renewal?",
            "Keep it simple: a meaningful place, a few close people, new or original vows, and a meal afterwards. It can be as informal as they like.",
        ),
    ],
};

/// The day the family moved into their house.
pub const MOVED_IN: Subject = Subject {
    key: "moved_into_house",
    category: Category::Date,
    subject: "date of moving into the house",
    pool: None,
    compose: Some(Compose::Date(1980, 2026)),
    statements: &[
        "We moved into our house on {v}.",
        "We got the keys to our house on {v}.",
    ],
    probes: &[
        "When did we move into our house?",
        "What date did we get the keys to our house?",
    ],
    answer: "You moved into your house on {v}.",
    unknown: "when you moved into your house",
    distractors: &[
        (
            "My colleague moved into his flat on {d} and still hasn't unpacked. How do you make unpacking less overwhelming?",
            "Unpack the kitchen and bedroom first, do one room at a time, and give yourself a deadline for the last boxes.",
        ),
        (
            "The previous owners came to our street on {d}, according to the neighbours. How do I find out the history of a house?",
            "Try the local archive, old maps, census records and the land registry; long-time neighbours often remember a surprising amount too.",
        ),
    ],
};
