//! Everyday questions and answers that fill the middle of a conversation,
//! grouped by topic, plus the short openers that vary how turns begin.
//!
//! Nothing here contains a digit or a value any anchor pool can produce, so a
//! filler turn never gives the answer to a probe away (a test checks this).

use aho_corasick::AhoCorasick;
use std::sync::LazyLock;

/// One topic: a name and question/answer pairs.
#[derive(Debug, Clone, Copy)]
pub struct Topic {
    /// Topic name, for statistics and debugging.
    pub name: &'static str,
    /// (user question, scripted assistant reply).
    pub pairs: &'static [(&'static str, &'static str)],
}

/// Sentences that may open a filler turn; empty means none.
pub const FILLER_OPENERS: &[&str] = &[
    "",
    "",
    "",
    "",
    "Different topic now.",
    "Unrelated question for you.",
    "Switching gears a little.",
    "Something else I've been wondering about.",
    "Quick question.",
    "Okay, next thing.",
    "Can I ask you something else?",
];

/// Sentences that may open the anchor turn.
pub const ANCHOR_OPENERS: &[&str] = &[
    "",
    "Hi!",
    "Hello.",
    "Hey there.",
    "Good morning!",
    "Hi, thanks for helping me today.",
];

/// Sentences that may close the anchor turn.
pub const ANCHOR_CLOSERS: &[&str] = &[
    "",
    "",
    "It may come up later, so keep it in mind.",
    "I thought I'd mention it in case it comes up.",
    "Anyway, I have a few questions for you.",
];

/// Sentences that may open the probe.
pub const PROBE_OPENERS: &[&str] = &[
    "",
    "Okay, last question.",
    "Before I go, a quick one.",
    "Quick memory test for you.",
    "One more thing.",
    "Let's see if you were paying attention.",
];

/// Replies to messages the model recognises as nothing in particular.
pub const GENERIC_REPLIES: &[&str] = &[
    "Good question. It depends a little on your situation, but starting small and adjusting as you go is usually the safest approach.",
    "That's a common concern. A bit of planning up front usually saves a lot of trouble later.",
    "I'd start with the simplest option and see whether it's enough before spending more time or money on it.",
    "It helps to break it into smaller steps and tackle the easiest one first; the rest tends to follow.",
    "Most people find that a little consistency beats occasional big efforts here.",
    "There's no single right answer, but asking someone who has done it before is often the quickest way to learn.",
    "Happy to help. If you tell me a bit more about what you have in mind, I can be more specific.",
    "That sounds manageable. Take it one step at a time and don't hesitate to ask if you get stuck.",
];

/// The filler topics.
pub const TOPICS: &[Topic] = &[
    Topic {
        name: "cooking",
        pairs: &[
            ("I'm making risotto tonight. How do I keep it creamy without adding cream?", "Toast the rice first, add warm stock a ladle at a time and keep stirring. Finish it off the heat with a knob of butter and some grated cheese; the starch from the rice does the rest."),
            ("My roast potatoes never come out crispy. What am I doing wrong?", "Parboil them, shake them in the pan to rough up the edges, and roast them in fat that is already hot. Give them space on the tray so they roast rather than steam."),
            ("What's a good weeknight dinner that doesn't take more than half an hour?", "A stir-fry is hard to beat: slice everything thinly, cook the protein first, then the vegetables, and finish with a quick sauce of soy, garlic and a little honey."),
            ("How do I stop my pancakes from turning out rubbery?", "Mix the batter only until it just comes together and let it rest for a while. Overmixing develops the gluten, which is what makes them tough."),
            ("Is it worth buying a cast iron pan?", "If you cook a lot of seared or baked dishes, yes. It holds heat well and lasts for decades; just dry it properly and keep it lightly oiled."),
            ("What can I do with a bag of overripe bananas?", "Banana bread is the classic, but they also freeze well for smoothies, can be mashed into pancake batter, or baked into oat bars."),
        ],
    },
    Topic {
        name: "travel",
        pairs: &[
            ("I always overpack. Any tips for travelling with just a carry-on?", "Plan outfits around a few colours that mix and match, roll your clothes, and wear your bulkiest shoes on the plane. Anything you can buy at the destination can stay at home."),
            ("Is it better to book flights early or wait for last-minute deals?", "For most routes, booking a couple of months ahead is the safer bet. Last-minute deals exist, but they are unreliable, especially in busy seasons."),
            ("How do I make a long train journey more comfortable?", "Bring layers, a refillable water bottle, snacks and something to read or watch offline. A small neck pillow and earplugs make a surprising difference."),
            ("What's the best way to deal with jet lag?", "Shift your sleep a little before you leave, get daylight at your destination as early as you can, and avoid long naps on the first day."),
            ("Should I get travel insurance for a short trip?", "It is usually worth it if you have prepaid bookings or would struggle to cover medical costs abroad. Check what your bank card already includes first."),
            ("How do I find good places to eat when I'm somewhere new?", "Walk a street or two away from the main sights, look for places full of locals, and ask the people who run your accommodation where they like to eat."),
        ],
    },
    Topic {
        name: "work",
        pairs: &[
            ("I have far too many meetings this week. How do I politely decline some of them?", "Ask whether the meeting needs you or just your input; often a short written update does the job. Declining with a clear reason and an alternative is rarely taken badly."),
            ("How do I give feedback to a colleague without sounding harsh?", "Be specific about the situation and its effect, avoid judgements about the person, and suggest what could work better next time."),
            ("I keep getting distracted when I work from home. Any advice?", "A fixed start time, a dedicated place to work and notifications switched off during focused blocks help a lot. Short breaks away from the screen keep you going longer."),
            ("What's a good way to prepare for a performance review?", "Write down what you achieved, with concrete examples, and where you want to grow. Bringing a couple of questions of your own makes it a conversation."),
            ("How do I write an email asking for a deadline extension?", "Ask early, explain briefly why, propose a new date you can actually meet, and say what you will deliver in the meantime."),
            ("My inbox is out of control. How do people manage email?", "Check it at set times rather than constantly, archive aggressively, and turn anything that needs real work into a task with a due date."),
        ],
    },
    Topic {
        name: "books",
        pairs: &[
            ("I want to read more but never seem to find the time. Any suggestions?", "Keep a book with you, read a few pages before bed instead of scrolling, and don't force yourself to finish books you aren't enjoying."),
            ("How should I pick my next novel?", "Think about the last book you couldn't put down and look for others by the same author or in the same genre. Librarians and local booksellers are great at suggestions too."),
            ("Are audiobooks as good as reading?", "For enjoying a story and remembering it, they work very well for most people, and they are especially handy on commutes or while doing chores."),
            ("I'm thinking of starting a book club. How do I keep it going?", "Keep it small, pick books that are easy to get hold of, meet regularly, and let members take turns choosing. Good snacks never hurt."),
            ("How do I get back into reading after a long break?", "Start with something short and gripping rather than a classic you feel you ought to read. Once the habit is back, longer books come easily."),
            ("Is it worth keeping notes on the books I read?", "A few lines on what stayed with you is enough, and it makes it much easier to recommend books or revisit ideas later."),
        ],
    },
    Topic {
        name: "weather",
        pairs: &[
            ("It's been raining all week. What can I do indoors to stay sane?", "Try a long cooking project, a jigsaw, a film marathon or a new hobby you can do at home. A short walk between showers helps too."),
            ("How do I keep my flat cool during a heatwave?", "Keep the blinds closed during the day, open the windows in the cool of the evening and early morning, and put a fan near an open window to pull in cooler air."),
            ("What's the best way to dress for unpredictable weather?", "Layers: a breathable base, a warm middle layer and a light waterproof shell you can pack away."),
            ("Why does it always feel colder when it's windy?", "Wind strips away the thin layer of warm air next to your skin, so your body loses heat faster than it would in still air at the same temperature."),
            ("Any tips for driving in heavy fog?", "Slow down, use dipped headlights and fog lights, leave a much bigger gap, and avoid overtaking. If it gets too thick, pull over somewhere safe and wait."),
            ("How do I protect my garden plants from a sudden frost?", "Cover tender plants overnight with fleece or an old sheet, move pots against a wall or indoors, and water in the morning rather than the evening."),
        ],
    },
    Topic {
        name: "fitness",
        pairs: &[
            ("I want to start running, but I get out of breath quickly. How should I begin?", "Alternate short bouts of running with walking and lengthen the running parts over a few weeks. Running slowly enough to hold a conversation is the key."),
            ("How often should I stretch?", "A few minutes after most workouts is enough for most people. Stretching works best when your muscles are already warm."),
            ("What's a good workout I can do at home without any equipment?", "Squats, lunges, press-ups, planks and glute bridges cover most of the body. Do them as a circuit with short rests and build up gradually."),
            ("Is it bad to exercise when I'm still a little sore?", "Mild soreness is fine, and gentle movement often helps. If it is sharp pain or gets worse while you exercise, rest and let it recover."),
            ("How do I stay motivated to go to the gym?", "Go at the same time each day, have a simple plan for every session and track your progress. Training with a friend makes skipping harder."),
            ("Should I eat before a morning workout?", "It depends on the workout and on you. A light snack such as a banana helps for longer or harder sessions; for an easy one many people feel fine without."),
        ],
    },
    Topic {
        name: "home_repair",
        pairs: &[
            ("The bathroom tap keeps dripping. Can I fix it myself?", "Usually, yes. Turn off the water supply, take the tap apart and replace the washer or cartridge, which is cheap and sold at any hardware shop."),
            ("How do I fill a small hole in plasterboard?", "Press in a little filler with a flexible knife, let it dry, sand it smooth and paint over it. Larger holes need a mesh patch first."),
            ("My door squeaks every time I open it. What's the quickest fix?", "A little lubricant on the hinge pins usually does it. Lift the pins slightly, apply oil or silicone spray, and swing the door a few times."),
            ("What tools should every home have?", "A good screwdriver set, a hammer, pliers, an adjustable spanner, a tape measure, a spirit level and a cordless drill cover most small jobs."),
            ("How do I bleed a radiator?", "With the heating off, open the bleed valve with a radiator key until the hissing stops and water appears, then close it and check the boiler pressure."),
            ("There's mould on my bathroom ceiling. How do I get rid of it?", "Clean it with a mould remover, then improve ventilation: run the extractor fan during and after showers and leave the door open so the room dries."),
        ],
    },
    Topic {
        name: "gardening",
        pairs: &[
            ("Which vegetables are easy to grow for a beginner?", "Salad leaves, radishes, courgettes, runner beans and herbs are forgiving and quick. Start with a few and grow more once you get the hang of it."),
            ("How often should I water the plants on my balcony?", "Pots dry out quickly, so check the soil daily in summer and water when the top layer is dry, ideally in the morning."),
            ("How do I get rid of slugs without chemicals?", "Beer traps, copper tape around pots and picking them off by torchlight in the evening all work. Encouraging birds and frogs helps too."),
            ("When should I prune my roses?", "Late winter or early spring, just as new growth starts. Cut out dead wood and crossing branches and open up the middle so air can move through."),
            ("Is composting at home worth the effort?", "It is, if you have a little outdoor space. Mix green kitchen scraps with brown material like cardboard, keep it moist and turn it now and then."),
        ],
    },
    Topic {
        name: "money",
        pairs: &[
            ("How do I start building an emergency fund?", "Set up an automatic transfer to a separate savings account on payday, even a small one, and treat it like a bill you always pay."),
            ("Is it worth tracking every single expense?", "For a month or two it is very revealing. After that, tracking categories rather than every coffee is usually enough."),
            ("How do I cut down on subscriptions I never use?", "List everything that leaves your account each month, cancel whatever you haven't used recently, and set reminders before free trials end."),
            ("Should I pay off debt or save first?", "Keep a small cushion for emergencies, then pay off high-interest debt as fast as you can; it usually costs more than savings earn."),
            ("What's a sensible way to budget for holidays?", "Estimate the total cost, divide it by the months until you go, and move that amount into a separate pot every month."),
        ],
    },
    Topic {
        name: "technology",
        pairs: &[
            ("My laptop has become really slow. What can I try?", "Check what starts automatically, uninstall programs you don't use, free up disk space and install pending updates. A restart now and then helps more than people think."),
            ("How do I make my passwords more secure?", "Use a password manager, a unique password for every account and two-factor authentication wherever it is offered."),
            ("Is it worth backing up my photos?", "Absolutely. Keep one copy in the cloud and another on an external drive, so a single failure can't wipe them out."),
            ("My phone battery drains really quickly. Any tips?", "Lower the screen brightness, check which apps use the most battery in the settings, and turn off background refresh for the ones that don't need it."),
            ("How can I cut down my screen time in the evenings?", "Charge your phone outside the bedroom, set app limits, and replace the evening scroll with reading or a short walk."),
        ],
    },
    Topic {
        name: "hobbies",
        pairs: &[
            ("I'd like to learn to draw. Where should I start?", "Begin with simple shapes and everyday objects, draw a little every day, and draw from life rather than photos when you can."),
            ("Is it too late to learn a musical instrument as an adult?", "Not at all. Adults often progress quickly because they practise with intention. Short daily sessions beat long weekly ones."),
            ("How do I take better photos with just my phone?", "Pay attention to the light, keep the lens clean, use the grid to compose, and move closer to your subject rather than zooming in."),
            ("What's a relaxing hobby I could do in the evenings?", "Knitting, jigsaw puzzles, journaling or sketching are all calm and easy to pick up and put down."),
            ("I want to learn a new language. How much should I practise?", "A little every day works best: a short session with some vocabulary, some listening and a bit of speaking keeps it moving."),
        ],
    },
];

/// Every (question, reply) pair of every topic, in table order.
pub fn all_pairs() -> impl Iterator<Item = (&'static str, &'static str)> {
    TOPICS.iter().flat_map(|t| t.pairs.iter().copied())
}

/// Every distinct question in one automaton, with the reply of its first
/// pair in table order.
static QUESTIONS: LazyLock<(AhoCorasick, Vec<(usize, &'static str)>)> = LazyLock::new(|| {
    let mut questions: Vec<&'static str> = Vec::new();
    // (table position of the first pair, its reply), per distinct question.
    let mut replies: Vec<(usize, &'static str)> = Vec::new();
    for (position, (q, a)) in all_pairs().enumerate() {
        if !questions.contains(&q) {
            questions.push(q);
            replies.push((position, a));
        }
    }
    let automaton = AhoCorasick::new(&questions)
        .unwrap_or_else(|e| panic!("the filler questions do not compile: {e}"));
    (automaton, replies)
});

/// The scripted reply of the first pair (in table order) whose question
/// occurs in `text`, as `all_pairs().find(|(q, _)| text.contains(q))` would
/// find it, in one pass over `text`.
pub fn reply_in(text: &str) -> Option<&'static str> {
    let (automaton, replies) = &*QUESTIONS;
    automaton
        .find_overlapping_iter(text)
        .map(|m| replies[m.pattern().as_usize()])
        .min_by_key(|(position, _)| *position)
        .map(|(_, reply)| reply)
}
