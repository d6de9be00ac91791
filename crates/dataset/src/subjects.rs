//! The table of anchor subjects: for each, the category, where its values
//! come from, how the user states it, how the user asks for it, how the
//! assistant answers, and sentences that mention someone else's value of the
//! same kind (distractors). The generator renders from this table and the
//! simulated model parses with it, so the two always agree.
//!
//! A subject with a curated pool takes part in curated datasets (the default
//! and anything up to [`crate::generate::CURATED_MAX`]
//! conversations); one with a composer takes part in composed datasets.
//! Subjects only composed datasets use live in
//! [`super::subjects_composed`].

use super::compose::Compose;
use super::generate::Mode;
use super::pools::{self, Pool};
use super::subjects_composed as composed;
use super::syllables;
use super::Category;

/// One kind of fact a user can state and later ask about.
#[derive(Debug, Clone, Copy)]
pub struct Subject {
    /// Stable key ("sister_name").
    pub key: &'static str,
    /// The anchor category.
    pub category: Category,
    /// Short noun phrase stored as `Anchor::subject` ("sister's name").
    pub subject: &'static str,
    /// Where values come from in a curated dataset; `None` when the subject
    /// is only used in composed datasets.
    pub pool: Option<Pool>,
    /// How values are composed in a composed dataset; `None` when the
    /// subject is only used in curated datasets.
    pub compose: Option<Compose>,
    /// First-person statements; `{v}` is the value.
    pub statements: &'static [&'static str],
    /// Questions that ask for the value; they never contain it.
    pub probes: &'static [&'static str],
    /// The answer, with `{v}` as the value ("Your sister is called {v}.").
    pub answer: &'static str,
    /// What is unknown when the statement is missing ("your sister's name"),
    /// completing "I don't know ..." and "I'll remember ...".
    pub unknown: &'static str,
    /// Filler turns mentioning someone else's value (`{d}`), with the
    /// scripted reply (which never repeats the value).
    pub distractors: &'static [(&'static str, &'static str)],
}

const NAME_DISTRACTORS: &[(&str, &str)] = &[
    (
        "My neighbour's youngest is called {d}, and their football keeps landing in our garden. How do I bring it up politely?",
        "Keep it light and friendly: mention it in passing, suggest a simple fix such as a net, and thank them when things improve.",
    ),
    (
        "I bumped into an old classmate, {d}, at the market and we promised to meet for coffee. Any ideas for a relaxed place to catch up?",
        "A quiet café with comfortable seats works well, or a walk in a park with a coffee to go. Pick somewhere you can hear each other easily.",
    ),
    (
        "A colleague of mine, {d}, just came back from parental leave. What's a nice way to welcome someone back?",
        "A short, warm note and a catch-up over lunch go a long way. Offer a summary of what changed while they were away, without piling it on all at once.",
    ),
];

const PLACE_DISTRACTORS: &[(&str, &str)] = &[
    (
        "My colleague grew up in {d} and keeps telling me I should visit. How do I plan a good city break?",
        "Stay in a neighbourhood you can explore on foot, book one or two things you really want to see, and leave plenty of time for wandering and eating.",
    ),
    (
        "My neighbours just got back from a week in {d} and loved it. How do people deal with the pile of chores after a holiday?",
        "Unpack straight away, do one load of laundry and leave the rest for the next day. Planning an easy meal for the evening you get back helps too.",
    ),
    (
        "A friend of mine is thinking about taking a job in {d}. What should someone consider before moving abroad?",
        "Cost of living, healthcare, language, visas and how easy it will be to build a social life. Visiting for a couple of weeks first helps a lot.",
    ),
];

/// Every subject: the curated and shared ones grouped by category in
/// [`Category::ALL`] order, then those only composed datasets use. New
/// subjects go at the end, so that curated datasets stay byte-identical.
pub const SUBJECTS: &[Subject] = &[
    // Person names.
    Subject {
        key: "sister_name",
        category: Category::PersonName,
        subject: "sister's name",
        pool: Some(Pool::List(pools::SISTER_NAMES)),
        compose: Some(Compose::Word(&syllables::FEMININE)),
        statements: &[
            "My sister's name is {v}.",
            "My sister is called {v}, and she's the funniest person I know.",
        ],
        probes: &[
            "What's my sister's name?",
            "Do you remember what my sister is called?",
        ],
        answer: "Your sister is called {v}.",
        unknown: "your sister's name",
        distractors: NAME_DISTRACTORS,
    },
    Subject {
        key: "brother_name",
        category: Category::PersonName,
        subject: "brother's name",
        pool: Some(Pool::List(pools::BROTHER_NAMES)),
        compose: Some(Compose::Word(&syllables::MASCULINE)),
        statements: &["My brother's name is {v}.", "My younger brother is called {v}."],
        probes: &[
            "What's my brother's name?",
            "Do you remember what my brother is called?",
        ],
        answer: "Your brother is called {v}.",
        unknown: "your brother's name",
        distractors: NAME_DISTRACTORS,
    },
    Subject {
        key: "manager_name",
        category: Category::PersonName,
        subject: "new manager's name",
        pool: Some(Pool::List(pools::MANAGER_NAMES)),
        compose: Some(Compose::Word(&syllables::ANY_NAME)),
        statements: &[
            "My new manager is called {v}.",
            "I've just started working for a new manager named {v}.",
        ],
        probes: &[
            "What's my new manager's name?",
            "Can you remind me what my new manager is called?",
        ],
        answer: "Your new manager is called {v}.",
        unknown: "your new manager's name",
        distractors: NAME_DISTRACTORS,
    },
    Subject {
        key: "best_friend_name",
        category: Category::PersonName,
        subject: "best friend's name",
        pool: Some(Pool::List(pools::FRIEND_NAMES)),
        compose: Some(Compose::Word(&syllables::ANY_NAME)),
        statements: &[
            "My best friend is called {v}.",
            "My best friend's name is {v}, and we've known each other since school.",
        ],
        probes: &["What's my best friend's name?", "Who is my best friend?"],
        answer: "Your best friend is called {v}.",
        unknown: "your best friend's name",
        distractors: NAME_DISTRACTORS,
    },
    Subject {
        key: "grandmother_name",
        category: Category::PersonName,
        subject: "grandmother's name",
        pool: Some(Pool::List(pools::GRANDMOTHER_NAMES)),
        compose: Some(Compose::Word(&syllables::OLD_FEMININE)),
        statements: &[
            "My grandmother's name is {v}.",
            "My grandmother is called {v}, and she still bakes every weekend.",
        ],
        probes: &[
            "What's my grandmother's name?",
            "Do you remember what my grandmother is called?",
        ],
        answer: "Your grandmother is called {v}.",
        unknown: "your grandmother's name",
        distractors: NAME_DISTRACTORS,
    },
    // Numbers: codes (digits only) and quantities.
    Subject {
        key: "gym_locker_code",
        category: Category::Number,
        subject: "gym locker code",
        pool: Some(Pool::Code(5)),
        compose: Some(Compose::Code(6)),
        statements: &[
            "The code for my gym locker is {v}.",
            "My gym locker code is {v}, in case I forget it.",
        ],
        probes: &[
            "What's the code for my gym locker?",
            "Can you remind me of my gym locker code?",
        ],
        answer: "Your gym locker code is {v}.",
        unknown: "your gym locker code",
        distractors: &[
            (
                "My brother's gym locker code is {d}, and he still forgets it every week. Any tricks for remembering short codes?",
                "Link the digits to something meaningful, like a pattern on the keypad, or keep them in a password manager.",
            ),
            (
                "Someone left a note on the gym noticeboard with the code {d} on it. Should I tell the staff?",
                "Yes, let the staff know. It may be someone's locker or door code, and they can take it down and warn the owner.",
            ),
        ],
    },
    Subject {
        key: "garage_code",
        category: Category::Number,
        subject: "garage keypad code",
        pool: Some(Pool::Code(6)),
        compose: Some(Compose::Code(6)),
        statements: &[
            "The keypad code for our garage is {v}.",
            "Our garage door opens with the code {v}.",
        ],
        probes: &[
            "What's the keypad code for our garage?",
            "Which code opens our garage door?",
        ],
        answer: "The keypad code for your garage is {v}.",
        unknown: "the keypad code for your garage",
        distractors: &[
            (
                "Our neighbours' gate code is {d}, and they keep giving it to delivery drivers. Is that a security risk?",
                "It can be, since codes spread quickly. Changing it now and then and using temporary codes for deliveries reduces the risk.",
            ),
            (
                "The code for the bike shed at work is {d}, and everyone seems to know it. How do I keep my bike safe?",
                "Use a good D-lock through the frame and a wheel, register the bike, and park it where it is visible rather than in a corner.",
            ),
        ],
    },
    Subject {
        key: "library_card",
        category: Category::Number,
        subject: "library card number",
        pool: Some(Pool::Code(8)),
        compose: Some(Compose::Code(8)),
        statements: &[
            "My library card number is {v}.",
            "The number on my library card is {v}.",
        ],
        probes: &[
            "What's my library card number?",
            "Can you tell me the number on my library card?",
        ],
        answer: "Your library card number is {v}.",
        unknown: "your library card number",
        distractors: &[
            (
                "The old library card I found in a drawer has the number {d} on it. Do libraries usually merge old accounts?",
                "Many do if you bring ID to a branch; they can often move your history and reservations to a new card.",
            ),
            (
                "My son's library card number is {d}, and he keeps losing the card. Can you use a library without the physical card?",
                "Most libraries have an app or can look you up with ID at the desk, so a lost card is rarely a problem.",
            ),
        ],
    },
    Subject {
        key: "parcel_code",
        category: Category::Number,
        subject: "parcel pickup code",
        pool: Some(Pool::Code(6)),
        compose: Some(Compose::Code(6)),
        statements: &[
            "The pickup code for my parcel is {v}.",
            "I got a text saying my parcel pickup code is {v}.",
        ],
        probes: &[
            "What's the pickup code for my parcel?",
            "Which code do I need to collect my parcel?",
        ],
        answer: "The pickup code for your parcel is {v}.",
        unknown: "the pickup code for your parcel",
        distractors: &[
            (
                "My flatmate's parcel pickup code is {d}, and he asked me to collect it for him. Is that usually allowed?",
                "Usually, yes, as long as you have the code and sometimes his name or ID. Some couriers insist on the recipient in person, so check first.",
            ),
            (
                "A delivery text arrived with the pickup code {d}, but I'm not expecting anything. Could it be a scam?",
                "It might be. Don't click links in the message; check the courier's official app or website directly and ignore any request for payment.",
            ),
        ],
    },
    Subject {
        key: "bathroom_tiles",
        category: Category::Number,
        subject: "number of bathroom tiles",
        pool: Some(Pool::Quantity),
        compose: None,
        statements: &[
            "I need {v} tiles for the bathroom floor.",
            "The tiler says I need {v} tiles for the bathroom floor.",
        ],
        probes: &[
            "How many tiles do I need for the bathroom floor?",
            "How many tiles did I say I need for the bathroom floor?",
        ],
        answer: "You need {v} tiles for the bathroom floor.",
        unknown: "how many tiles you need for the bathroom floor",
        distractors: &[
            (
                "My neighbour ordered {d} tiles for his kitchen and ended up with far too many. How much spare should you normally order?",
                "About a tenth extra is typical to cover cuts and breakages, a little more for diagonal layouts or patterned tiles.",
            ),
            (
                "The shop only has {d} tiles left of the pattern I like. Is it risky to mix batches?",
                "It can be, as colours vary slightly between batches. If you have to mix them, blend tiles from both across the floor so the difference is less visible.",
            ),
        ],
    },
    Subject {
        key: "wedding_invitations",
        category: Category::Number,
        subject: "number of wedding invitations",
        pool: Some(Pool::Quantity),
        compose: None,
        statements: &[
            "We're sending out {v} wedding invitations.",
            "My partner and I are sending out {v} wedding invitations.",
        ],
        probes: &[
            "How many wedding invitations are we sending out?",
            "Do you remember how many wedding invitations we're sending?",
        ],
        answer: "You're sending out {v} wedding invitations.",
        unknown: "how many wedding invitations you're sending out",
        distractors: &[
            (
                "My cousin sent out {d} invitations for her wedding and is worried about the catering. How do caterers estimate portions?",
                "They work from the confirmed guest count, the style of meal and the time of day, and usually add a small margin for safety.",
            ),
            (
                "Our venue holds {d} people standing. Do we need to worry about fire regulations?",
                "The venue's capacity limit already reflects fire regulations, so stay under it and ask the venue about their evacuation plan.",
            ),
        ],
    },
    Subject {
        key: "thesis_pages",
        category: Category::Number,
        subject: "length of thesis draft",
        pool: Some(Pool::Quantity),
        compose: None,
        statements: &[
            "My thesis draft is {v} pages long.",
            "My thesis draft has grown to {v} pages.",
        ],
        probes: &[
            "How many pages long is my thesis draft?",
            "How long did I say my thesis draft is?",
        ],
        answer: "Your thesis draft is {v} pages long.",
        unknown: "how long your thesis draft is",
        distractors: &[
            (
                "My friend's dissertation ran to {d} pages, which sounds exhausting. How do you keep a long document organised?",
                "Use headings and styles consistently, keep an outline, and use a reference manager. Saving numbered versions helps avoid mistakes.",
            ),
            (
                "The reading list for my course runs to {d} pages this term. How do I read faster without missing things?",
                "Skim headings and conclusions first, read with a question in mind, and take brief notes as you go rather than highlighting everything.",
            ),
        ],
    },
    Subject {
        key: "orchard_trees",
        category: Category::Number,
        subject: "number of apple trees",
        pool: Some(Pool::Quantity),
        compose: None,
        statements: &[
            "Our orchard has {v} apple trees.",
            "We've planted {v} apple trees in our orchard.",
        ],
        probes: &[
            "How many apple trees are in our orchard?",
            "Do you remember how many apple trees our orchard has?",
        ],
        answer: "Your orchard has {v} apple trees.",
        unknown: "how many apple trees are in your orchard",
        distractors: &[
            (
                "The farm down the road has {d} apple trees and makes cider every autumn. How is cider actually made?",
                "The apples are washed, crushed and pressed, and the juice ferments with yeast for a few weeks before it is matured and bottled.",
            ),
            (
                "My uncle planted {d} cherry trees on his land. How long before they start producing fruit?",
                "Usually three to five years, depending on the variety and the rootstock. Dwarf trees tend to fruit sooner.",
            ),
        ],
    },
    // Dates.
    Subject {
        key: "passport_expiry",
        category: Category::Date,
        subject: "passport expiry date",
        pool: Some(Pool::Date(2027, 2035)),
        compose: None,
        statements: &[
            "My passport expires on {v}.",
            "I just checked, and my passport expires on {v}.",
        ],
        probes: &[
            "When does my passport expire?",
            "What's the expiry date on my passport?",
        ],
        answer: "Your passport expires on {v}.",
        unknown: "when your passport expires",
        distractors: &[
            (
                "My partner's passport expires on {d}, so we need to renew it before our next trip. How long does a renewal usually take?",
                "It varies by country and season, from a few weeks to a few months, so apply early and check the official processing times.",
            ),
            (
                "My brother's passport runs out on {d}. Do some countries need more validity than that?",
                "Yes, many countries require a passport to stay valid for several months beyond your visit, so check the entry rules of each destination.",
            ),
        ],
    },
    Subject {
        key: "lease_end",
        category: Category::Date,
        subject: "end of the flat lease",
        pool: Some(Pool::Date(2027, 2029)),
        compose: None,
        statements: &[
            "The lease on my flat ends on {v}.",
            "My landlord confirmed that the lease on my flat ends on {v}.",
        ],
        probes: &[
            "When does the lease on my flat end?",
            "What date does my flat's lease run out?",
        ],
        answer: "The lease on your flat ends on {v}.",
        unknown: "when the lease on your flat ends",
        distractors: &[
            (
                "My friend's lease ends on {d}, and she hasn't found a new flat yet. Any tips for flat hunting in a hurry?",
                "Set alerts on several listing sites, have your documents ready to send, view places quickly and be flexible about the area if you can.",
            ),
            (
                "The lease on my colleague's office ends on {d}, and they're looking for a new space. What matters most in an office?",
                "Good light, a reasonable commute for the team, enough meeting rooms and reliable internet usually matter more than a fancy address.",
            ),
        ],
    },
    Subject {
        key: "cousin_wedding",
        category: Category::Date,
        subject: "date of cousin's wedding",
        pool: Some(Pool::Date(2027, 2028)),
        compose: None,
        statements: &[
            "My cousin's wedding is on {v}.",
            "My cousin is getting married on {v}.",
        ],
        probes: &[
            "When is my cousin's wedding?",
            "What date is my cousin getting married?",
        ],
        answer: "Your cousin's wedding is on {v}.",
        unknown: "when your cousin's wedding is",
        distractors: &[
            (
                "My colleague's wedding is on {d}, and I have no idea what to give. What makes a good wedding gift?",
                "Something from their registry is the safest choice; otherwise an experience or a thoughtful personal gift with a card works well.",
            ),
            (
                "My best friend's wedding is on {d}, and I'm giving a speech. How do I write a good one?",
                "Keep it short, tell one or two warm stories, include both partners and end with a toast. Practise it aloud a few times.",
            ),
        ],
    },
    Subject {
        key: "new_job_start",
        category: Category::Date,
        subject: "start date of new job",
        pool: Some(Pool::Date(2027, 2027)),
        compose: None,
        statements: &[
            "I start my new job on {v}.",
            "My first day at the new job is {v}.",
        ],
        probes: &[
            "When do I start my new job?",
            "What's the date of my first day at the new job?",
        ],
        answer: "You start your new job on {v}.",
        unknown: "when you start your new job",
        distractors: &[
            (
                "My brother starts his new job on {d}. What's a thoughtful good-luck gift?",
                "A nice notebook and pen, a good coffee mug or a lunch voucher for the first week are useful and thoughtful.",
            ),
            (
                "My partner is starting a new role on {d}, and they're nervous about it. How can I help?",
                "Listen, take some practical things off their plate in the first weeks, and remind them that nobody expects them to know everything straight away.",
            ),
        ],
    },
    Subject {
        key: "dental_checkup",
        category: Category::Date,
        subject: "date of next dental check-up",
        pool: Some(Pool::Date(2027, 2027)),
        compose: None,
        statements: &[
            "My next dental check-up is on {v}.",
            "I've booked my next dental check-up for {v}.",
        ],
        probes: &[
            "When is my next dental check-up?",
            "What date did I book my next dental check-up for?",
        ],
        answer: "Your next dental check-up is on {v}.",
        unknown: "when your next dental check-up is",
        distractors: &[
            (
                "My son's dental check-up is on {d}, and he's nervous. How do I help a child who is scared of the dentist?",
                "Talk about it calmly and simply, read a picture book about visiting the dentist, and praise them afterwards. Avoid sharing your own bad experiences.",
            ),
            (
                "My mother's dental appointment is on {d}, and she needs a lift. Is it normal to feel groggy after a filling?",
                "A numb mouth for a few hours is normal; real grogginess is rare unless she had sedation, in which case she shouldn't drive.",
            ),
        ],
    },
    // Preferences.
    Subject {
        key: "favourite_cuisine",
        category: Category::Preference,
        subject: "favourite cuisine",
        pool: Some(Pool::List(pools::CUISINES)),
        compose: Some(Compose::Word(&syllables::CUISINE)),
        statements: &[
            "My favourite cuisine is {v}.",
            "If I could eat only one cuisine for the rest of my life, it would be {v}.",
        ],
        probes: &["What's my favourite cuisine?", "Which cuisine do I like best?"],
        answer: "Your favourite cuisine is {v}.",
        unknown: "your favourite cuisine",
        distractors: &[
            (
                "My colleague swears by {d} food and wants to organise a team lunch. How do I pick a restaurant for a big group?",
                "Look for a place that takes group bookings, check the menu for dietary needs in advance, and consider a set menu to keep things simple.",
            ),
            (
                "My brother-in-law has been cooking a lot of {d} dishes lately. How long do leftovers keep in the fridge?",
                "Most cooked leftovers are fine for two or three days if they are cooled quickly and kept covered. Rice should be cooled fast and eaten within a day.",
            ),
        ],
    },
    Subject {
        key: "favourite_tea",
        category: Category::Preference,
        subject: "favourite tea",
        pool: Some(Pool::List(pools::TEAS)),
        compose: Some(Compose::Word(&syllables::TEA)),
        statements: &[
            "My favourite tea is {v}.",
            "Every morning I drink {v}; it's my favourite tea.",
        ],
        probes: &["What's my favourite tea?", "Which tea do I like best?"],
        answer: "Your favourite tea is {v}.",
        unknown: "your favourite tea",
        distractors: &[
            (
                "My flatmate drinks {d} all day long. Is it true that loose-leaf tea keeps better in a tin?",
                "Yes. An airtight, opaque tin away from heat, light and strong smells keeps tea fresh far longer than a paper bag.",
            ),
            (
                "My aunt brought me a box of {d} from her trip. How hot should the water be for tea?",
                "It depends on the tea: green and white teas like water a little off the boil, while black and herbal teas can take boiling water.",
            ),
        ],
    },
    Subject {
        key: "favourite_composer",
        category: Category::Preference,
        subject: "favourite composer",
        pool: Some(Pool::List(pools::COMPOSERS)),
        compose: Some(Compose::Word(&syllables::COMPOSER)),
        statements: &[
            "My favourite composer is {v}.",
            "Of all composers, I love {v} the most.",
        ],
        probes: &[
            "Who is my favourite composer?",
            "Which composer do I love most?",
        ],
        answer: "Your favourite composer is {v}.",
        unknown: "your favourite composer",
        distractors: &[
            (
                "My piano teacher keeps assigning me {d}, which I find hard. How do I practise a tricky passage without getting frustrated?",
                "Slow it right down, practise small chunks, and use a metronome to build the tempo back up gradually. Stop before you get tired.",
            ),
            (
                "My neighbour plays {d} on the cello every evening. How do I soundproof a bedroom wall cheaply?",
                "Heavy curtains, a bookcase full of books against the wall and thick rugs help a lot. Sealing gaps around the door makes a surprising difference.",
            ),
        ],
    },
    Subject {
        key: "favourite_board_game",
        category: Category::Preference,
        subject: "favourite board game",
        pool: Some(Pool::List(pools::BOARD_GAMES)),
        compose: Some(Compose::Word(&syllables::BOARD_GAME)),
        statements: &[
            "My favourite board game is {v}.",
            "The board game I love most is {v}.",
        ],
        probes: &[
            "What's my favourite board game?",
            "Which board game do I love most?",
        ],
        answer: "Your favourite board game is {v}.",
        unknown: "your favourite board game",
        distractors: &[
            (
                "My cousins play {d} every Sunday and keep inviting me. How do I learn a new board game quickly?",
                "Watch a short rules video, play a practice round with open hands, and ask the others to explain their moves as they go.",
            ),
            (
                "My colleague brought {d} to the office games night, and it was a hit. How do I organise a games night people actually come to?",
                "Pick a regular evening, keep the games simple enough to learn quickly, provide snacks and send a reminder the day before.",
            ),
        ],
    },
    Subject {
        key: "favourite_flowers",
        category: Category::Preference,
        subject: "favourite flowers",
        pool: Some(Pool::List(pools::FLOWERS)),
        compose: Some(Compose::Word(&syllables::FLOWERS)),
        statements: &[
            "My favourite flowers are {v}.",
            "Nothing cheers me up like a bunch of {v}; they're my favourite flowers.",
        ],
        probes: &["What are my favourite flowers?", "Which flowers do I like best?"],
        answer: "Your favourite flowers are {v}.",
        unknown: "your favourite flowers",
        distractors: &[
            (
                "My neighbour grows {d} all along her fence. When is the best time to plant new flowers?",
                "Spring and early autumn suit most plants, when the soil is warm and moist. Avoid planting during a heatwave or a frost.",
            ),
            (
                "My colleague's bouquet was full of {d}. How do I make cut flowers last longer?",
                "Trim the stems at an angle, remove leaves below the waterline, change the water every couple of days and keep the vase out of direct sun.",
            ),
        ],
    },
    // Places.
    Subject {
        key: "grew_up",
        category: Category::Place,
        subject: "home town",
        pool: Some(Pool::List(pools::GREW_UP_PLACES)),
        compose: Some(Compose::Word(&syllables::PLACE)),
        statements: &["I grew up in {v}.", "I was born and raised in {v}."],
        probes: &["Where did I grow up?", "Where was I raised?"],
        answer: "You grew up in {v}.",
        unknown: "where you grew up",
        distractors: PLACE_DISTRACTORS,
    },
    Subject {
        key: "parents_live",
        category: Category::Place,
        subject: "where parents live",
        pool: Some(Pool::List(pools::PARENTS_PLACES)),
        compose: Some(Compose::Word(&syllables::PLACE)),
        statements: &[
            "My parents live in {v}.",
            "My parents moved to {v} a few years ago.",
        ],
        probes: &[
            "Where do my parents live?",
            "Which city do my parents live in?",
        ],
        answer: "Your parents live in {v}.",
        unknown: "where your parents live",
        distractors: PLACE_DISTRACTORS,
    },
    Subject {
        key: "moving_to",
        category: Category::Place,
        subject: "city moving to",
        pool: Some(Pool::List(pools::MOVING_PLACES)),
        compose: Some(Compose::Word(&syllables::PLACE)),
        statements: &[
            "I'm moving to {v} in the spring.",
            "Next year I'm relocating to {v} for work.",
        ],
        probes: &["Where am I moving to?", "Which city am I relocating to?"],
        answer: "You're moving to {v}.",
        unknown: "where you're moving to",
        distractors: PLACE_DISTRACTORS,
    },
    Subject {
        key: "honeymoon",
        category: Category::Place,
        subject: "honeymoon destination",
        pool: Some(Pool::List(pools::HONEYMOON_PLACES)),
        compose: Some(Compose::Word(&syllables::PLACE)),
        statements: &[
            "We spent our honeymoon in {v}.",
            "My partner and I went to {v} for our honeymoon.",
        ],
        probes: &[
            "Where did we go on our honeymoon?",
            "Where did we spend our honeymoon?",
        ],
        answer: "You spent your honeymoon in {v}.",
        unknown: "where you spent your honeymoon",
        distractors: PLACE_DISTRACTORS,
    },
    // Invented words.
    Subject {
        key: "cat_name",
        category: Category::InventedWord,
        subject: "cat's name",
        pool: Some(Pool::Invented),
        compose: Some(Compose::Word(&syllables::INVENTED)),
        statements: &[
            "Our cat is called {v}.",
            "We adopted a cat last year and named her {v}.",
        ],
        probes: &["What's our cat called?", "What did we name our cat?"],
        answer: "Your cat is called {v}.",
        unknown: "what your cat is called",
        distractors: &[
            (
                "My neighbour's cat is called {d} and keeps sneaking into our kitchen. How do I keep it out without upsetting anyone?",
                "Keep doors and windows closed when you can, don't feed it, and have a friendly word with your neighbour. A motion-activated sprinkler outside helps too.",
            ),
            (
                "My friend just adopted a kitten and named it {d}. What should she buy before bringing it home?",
                "A litter tray, food and water bowls, a scratching post, a carrier and a few toys. A quiet room for the first few days helps the kitten settle.",
            ),
        ],
    },
    Subject {
        key: "boat_name",
        category: Category::InventedWord,
        subject: "sailing boat's name",
        pool: Some(Pool::Invented),
        compose: Some(Compose::Word(&syllables::INVENTED)),
        statements: &[
            "I named my sailing boat {v}.",
            "My sailing boat is called {v}.",
        ],
        probes: &[
            "What did I name my sailing boat?",
            "What's my sailing boat called?",
        ],
        answer: "Your sailing boat is called {v}.",
        unknown: "what your sailing boat is called",
        distractors: &[
            (
                "My uncle is restoring an old fishing boat called {d}. What does restoring a wooden boat involve?",
                "Mostly patience: checking the hull for rot, replacing damaged planks, recaulking the seams and building up paint or varnish in thin coats.",
            ),
            (
                "There's a lovely old boat in the harbour called {d}. How do wooden boats stay watertight?",
                "The planks swell when wet, which closes the seams, and the seams are caulked and sealed. Regular care of the paint and varnish keeps water out.",
            ),
        ],
    },
    Subject {
        key: "project_codename",
        category: Category::InventedWord,
        subject: "project codename",
        pool: Some(Pool::Invented),
        compose: Some(Compose::Word(&syllables::INVENTED)),
        statements: &[
            "The project I lead at work is codenamed {v}.",
            "At work I'm leading a project codenamed {v}.",
        ],
        probes: &[
            "What's the codename of the project I lead at work?",
            "What is my project at work codenamed?",
        ],
        answer: "The project you lead at work is codenamed {v}.",
        unknown: "the codename of the project you lead at work",
        distractors: &[
            (
                "The team next to ours has a project called {d} that nobody seems to understand. How do I ask about it without sounding nosy?",
                "Be curious rather than critical: ask someone on the team for a quick overview because you think it might connect with your own work.",
            ),
            (
                "My friend's startup just launched an app called {d}. How can I support a friend's new business?",
                "Use it if it suits you, leave an honest review, recommend it to people who might need it and share their posts. Kind, specific feedback is valuable too.",
            ),
        ],
    },
    Subject {
        key: "tortoise_name",
        category: Category::InventedWord,
        subject: "tortoise's name",
        pool: Some(Pool::Invented),
        compose: Some(Compose::Word(&syllables::INVENTED)),
        statements: &[
            "My tortoise is called {v}.",
            "I have a tortoise named {v}, and he's older than I am.",
        ],
        probes: &[
            "What's my tortoise called?",
            "What's the name of my tortoise?",
        ],
        answer: "Your tortoise is called {v}.",
        unknown: "what your tortoise is called",
        distractors: &[
            (
                "My friend's tortoise is called {d} and is over forty years old. How long do tortoises usually live?",
                "Many species live for decades, and some pass a century with good care. They are a real long-term commitment.",
            ),
            (
                "My nephew wants a tortoise like his friend's, which is called {d}. Are tortoises good pets for children?",
                "They can be, but they need a warm enclosure, the right diet and care for a very long time, so an adult has to take real responsibility.",
            ),
        ],
    },
    Subject {
        key: "sourdough_name",
        category: Category::InventedWord,
        subject: "sourdough starter's name",
        pool: Some(Pool::Invented),
        compose: Some(Compose::Word(&syllables::INVENTED)),
        statements: &[
            "I've named my sourdough starter {v}.",
            "My sourdough starter is called {v}.",
        ],
        probes: &[
            "What did I name my sourdough starter?",
            "What's my sourdough starter called?",
        ],
        answer: "Your sourdough starter is called {v}.",
        unknown: "what your sourdough starter is called",
        distractors: &[
            (
                "My colleague's sourdough starter is called {d}, and she brings bread in every Friday. Why does sourdough taste sour?",
                "Wild yeasts and lactic acid bacteria ferment the dough together, and the acids they produce give the bread its tang.",
            ),
            (
                "My neighbour gave me some of her starter, which she calls {d}. How do I keep a starter alive?",
                "Feed it regularly with equal weights of flour and water, keep it in the fridge if you bake rarely, and feed it again a day before baking.",
            ),
        ],
    },
    // Only in composed datasets.
    composed::NOVEL_WORDS,
    composed::CAR_MILEAGE,
    composed::MONTHLY_STEPS,
    composed::FUNDRAISER,
    composed::PARISH_BAPTISM,
    composed::GRAVESTONE,
    composed::COTTAGE_DEEDS,
    composed::GREAT_GRANDMOTHER_BORN,
    composed::GRANDPARENTS_MARRIED,
    composed::MOVED_IN,
];

/// The subjects of one category that datasets of `mode` use, in table order.
pub fn of_category(category: Category, mode: Mode) -> Vec<&'static Subject> {
    SUBJECTS
        .iter()
        .filter(|s| s.category == category && s.used_in(mode))
        .collect()
}

impl Subject {
    /// Whether datasets of `mode` use this subject.
    pub fn used_in(&self, mode: Mode) -> bool {
        match mode {
            Mode::Curated => self.pool.is_some(),
            Mode::Composed => self.compose.is_some(),
        }
    }
}
