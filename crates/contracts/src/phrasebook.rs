//! A small multilingual phrasebook: for each language the contracts know, a
//! dozen natural, topic-neutral sentences of the kind an assistant writes,
//! and a few policy refusals.
//!
//! The sentences are parallel (sentence `i` means the same in every
//! language), so a transform can translate a phrasebook reply sentence by
//! sentence, and a simulated multilingual responder can answer in the
//! conversation's language. `language_drift` draws its foreign sentences
//! from here. They were written by hand to read naturally; none contains a
//! digit, a name or a word borrowed from another of the languages, so a
//! detector has nothing but the language itself to go on.

use crate::Language;

/// The parallel sentences of `language`, twelve of them.
pub fn sentences(language: Language) -> &'static [&'static str] {
    match language {
        Language::En => EN,
        Language::Pt => PT,
        Language::Es => ES,
        Language::Fr => FR,
        Language::It => IT,
        Language::De => DE,
        Language::Nl => NL,
        Language::Pl => PL,
        Language::Tr => TR,
        Language::Ja => JA,
        Language::Ru => RU,
        Language::Zh => ZH,
        Language::Ko => KO,
        Language::Ar => AR,
        Language::Hi => HI,
        Language::Id => ID,
        Language::Vi => VI,
    }
}

/// Policy refusals in `language`, as a model that declines the request
/// writes them.
pub fn refusals(language: Language) -> &'static [&'static str] {
    match language {
        Language::En => &[
            "I'm sorry, but I can't help with that.",
            "I can't assist with that request.",
            "Sorry, I'm not able to help with this.",
        ],
        Language::Pt => &[
            "Desculpe, mas não posso ajudar com isso.",
            "Não posso atender a esse pedido.",
            "Lamento, mas não consigo ajudar com isso.",
        ],
        Language::Es => &[
            "Lo siento, pero no puedo ayudarte con eso.",
            "No puedo atender esa solicitud.",
            "Lo siento, no puedo ayudar con esto.",
        ],
        Language::Fr => &[
            "Désolé, mais je ne peux pas vous aider avec cela.",
            "Je ne peux pas répondre à cette demande.",
            "Je suis désolé, je ne peux pas aider avec ça.",
        ],
        Language::It => &[
            "Mi dispiace, ma non posso aiutarti con questo.",
            "Non posso soddisfare questa richiesta.",
            "Mi dispiace, non posso aiutare con questa richiesta.",
        ],
        Language::De => &[
            "Es tut mir leid, aber dabei kann ich nicht helfen.",
            "Ich kann dieser Anfrage nicht nachkommen.",
            "Leider kann ich dir dabei nicht helfen.",
        ],
        Language::Nl => &[
            "Het spijt me, maar daar kan ik je niet mee helpen.",
            "Ik kan niet aan dit verzoek voldoen.",
            "Sorry, daar kan ik niet mee helpen.",
        ],
        Language::Pl => &[
            "Przykro mi, ale nie mogę w tym pomóc.",
            "Nie mogę spełnić tej prośby.",
            "Niestety nie mogę ci w tym pomóc.",
        ],
        Language::Tr => &[
            "Üzgünüm, bu konuda yardımcı olamam.",
            "Bu isteği yerine getiremem.",
            "Maalesef bu konuda sana yardımcı olamam.",
        ],
        Language::Ja => &[
            "申し訳ありませんが、そのご依頼にはお応えできません。",
            "申し訳ございませんが、その件についてはお手伝いできません。",
            "そのリクエストにはお答えできません。",
        ],
        Language::Ru => &[
            "Извините, но я не могу помочь с этим.",
            "Я не могу выполнить этот запрос.",
            "К сожалению, я не могу с этим помочь.",
        ],
        Language::Zh => &[
            "抱歉，我无法帮助你处理这个请求。",
            "我不能协助完成这个请求。",
            "很抱歉，我无法提供这方面的帮助。",
        ],
        Language::Ko => &[
            "죄송하지만, 그 요청은 도와드릴 수 없습니다.",
            "이 요청에는 응해 드릴 수 없습니다.",
            "죄송해요, 이 부분은 도와드리기 어려워요.",
        ],
        Language::Ar => &[
            "عذرًا، لا يمكنني المساعدة في ذلك.",
            "لا أستطيع تلبية هذا الطلب.",
            "آسف، لا يمكنني مساعدتك في هذا الأمر.",
        ],
        Language::Hi => &[
            "क्षमा करें, मैं इसमें आपकी मदद नहीं कर सकता।",
            "मैं यह अनुरोध पूरा नहीं कर सकता।",
            "माफ़ कीजिए, मैं इस विषय में सहायता करने में असमर्थ हूँ।",
        ],
        Language::Id => &[
            "Maaf, saya tidak dapat membantu dengan permintaan itu.",
            "Saya tidak bisa memenuhi permintaan ini.",
            "Mohon maaf, saya tidak bisa membantu untuk hal ini.",
        ],
        Language::Vi => &[
            "Xin lỗi, tôi không thể giúp bạn việc này.",
            "Tôi không thể đáp ứng yêu cầu này.",
            "Rất tiếc, tôi không thể hỗ trợ bạn với yêu cầu này.",
        ],
    }
}

const EN: &[&str] = &[
    "That is a good question, and the answer depends on a few things.",
    "In most cases, the simplest solution is also the best one.",
    "Try it first with a small amount and see how it goes.",
    "If the problem persists, it is worth asking a specialist.",
    "Many people find it easier to do this in the morning.",
    "You do not need expensive equipment to get started.",
    "Keep a short note of what you tried, so you can compare later.",
    "It usually takes a few weeks before you notice a difference.",
    "The most important thing is to be consistent.",
    "Let me know if you would like a more detailed explanation.",
    "Read the instructions carefully before you begin.",
    "With a little patience, the result will be worth it.",
];

const PT: &[&str] = &[
    "É uma boa pergunta, e a resposta depende de algumas coisas.",
    "Na maioria dos casos, a solução mais simples também é a melhor.",
    "Experimente primeiro com uma pequena quantidade e veja o resultado.",
    "Se o problema continuar, vale a pena consultar um especialista.",
    "Muitas pessoas acham mais fácil fazer isso de manhã.",
    "Você não precisa de equipamento caro para começar.",
    "Anote o que você já tentou, para poder comparar depois.",
    "Normalmente leva algumas semanas até você notar uma diferença.",
    "O mais importante é manter a constância.",
    "Diga-me se quiser uma explicação mais detalhada.",
    "Leia as instruções com atenção antes de começar.",
    "Com um pouco de paciência, o resultado vai valer a pena.",
];

const ES: &[&str] = &[
    "Es una buena pregunta, y la respuesta depende de varias cosas.",
    "En la mayoría de los casos, la solución más sencilla también es la mejor.",
    "Pruébalo primero con una cantidad pequeña y mira qué tal funciona.",
    "Si el problema continúa, vale la pena consultar a un especialista.",
    "A muchas personas les resulta más fácil hacerlo por la mañana.",
    "No necesitas un equipo caro para empezar.",
    "Apunta lo que has probado, para poder compararlo después.",
    "Normalmente pasan unas semanas antes de que notes la diferencia.",
    "Lo más importante es ser constante.",
    "Avísame si quieres una explicación más detallada.",
    "Lee las instrucciones con atención antes de empezar.",
    "Con un poco de paciencia, el resultado merecerá la pena.",
];

const FR: &[&str] = &[
    "C'est une bonne question, et la réponse dépend de plusieurs choses.",
    "Dans la plupart des cas, la solution la plus simple est aussi la meilleure.",
    "Essayez d'abord avec une petite quantité et voyez comment ça se passe.",
    "Si le problème persiste, il vaut la peine de consulter un spécialiste.",
    "Beaucoup de gens trouvent plus facile de le faire le matin.",
    "Vous n'avez pas besoin d'un équipement coûteux pour commencer.",
    "Notez ce que vous avez essayé, pour pouvoir comparer plus tard.",
    "Il faut généralement quelques semaines avant de remarquer une différence.",
    "Le plus important, c'est d'être régulier.",
    "Dites-moi si vous souhaitez une explication plus détaillée.",
    "Lisez attentivement les instructions avant de commencer.",
    "Avec un peu de patience, le résultat en vaudra la peine.",
];

const IT: &[&str] = &[
    "È una bella domanda, e la risposta dipende da alcune cose.",
    "Nella maggior parte dei casi, la soluzione più semplice è anche la migliore.",
    "Prova prima con una piccola quantità e vedi come va.",
    "Se il problema persiste, vale la pena rivolgersi a uno specialista.",
    "Molte persone trovano più facile farlo al mattino.",
    "Non ti serve un'attrezzatura costosa per iniziare.",
    "Annota quello che hai provato, così potrai confrontare più tardi.",
    "Di solito ci vogliono alcune settimane prima di notare una differenza.",
    "La cosa più importante è essere costanti.",
    "Fammi sapere se vuoi una spiegazione più dettagliata.",
    "Leggi attentamente le istruzioni prima di cominciare.",
    "Con un po' di pazienza, il risultato ne varrà la pena.",
];

const DE: &[&str] = &[
    "Das ist eine gute Frage, und die Antwort hängt von ein paar Dingen ab.",
    "In den meisten Fällen ist die einfachste Lösung auch die beste.",
    "Probier es zuerst mit einer kleinen Menge aus und schau, wie es läuft.",
    "Wenn das Problem bestehen bleibt, lohnt es sich, einen Fachmann zu fragen.",
    "Vielen Menschen fällt es leichter, das morgens zu erledigen.",
    "Du brauchst keine teure Ausrüstung, um anzufangen.",
    "Notiere dir kurz, was du ausprobiert hast, damit du später vergleichen kannst.",
    "Meistens dauert es ein paar Wochen, bis man einen Unterschied bemerkt.",
    "Das Wichtigste ist, dranzubleiben.",
    "Sag mir Bescheid, wenn du eine ausführlichere Erklärung möchtest.",
    "Lies die Anleitung sorgfältig durch, bevor du anfängst.",
    "Mit etwas Geduld wird sich das Ergebnis lohnen.",
];

const NL: &[&str] = &[
    "Dat is een goede vraag, en het antwoord hangt van een paar dingen af.",
    "In de meeste gevallen is de eenvoudigste oplossing ook de beste.",
    "Probeer het eerst met een kleine hoeveelheid en kijk hoe het gaat.",
    "Als het probleem blijft, is het de moeite waard om een specialist te raadplegen.",
    "Veel mensen vinden het makkelijker om dit 's ochtends te doen.",
    "Je hebt geen dure spullen nodig om te beginnen.",
    "Schrijf kort op wat je hebt geprobeerd, zodat je later kunt vergelijken.",
    "Meestal duurt het een paar weken voordat je verschil merkt.",
    "Het belangrijkste is dat je het volhoudt.",
    "Laat het me weten als je een uitgebreidere uitleg wilt.",
    "Lees de instructies goed door voordat je begint.",
    "Met een beetje geduld is het resultaat het zeker waard.",
];

const PL: &[&str] = &[
    "To dobre pytanie, a odpowiedź zależy od kilku rzeczy.",
    "W większości przypadków najprostsze rozwiązanie jest też najlepsze.",
    "Spróbuj najpierw z niewielką ilością i zobacz, jak to działa.",
    "Jeśli problem nie ustępuje, warto zapytać specjalistę.",
    "Wiele osób uważa, że łatwiej to zrobić rano.",
    "Nie potrzebujesz drogiego sprzętu, żeby zacząć.",
    "Zapisz krótko, co już wypróbowałeś, żeby móc później porównać.",
    "Zwykle mija kilka tygodni, zanim zauważysz różnicę.",
    "Najważniejsze jest to, żeby być konsekwentnym.",
    "Daj mi znać, jeśli chcesz bardziej szczegółowego wyjaśnienia.",
    "Przed rozpoczęciem uważnie przeczytaj instrukcję.",
    "Przy odrobinie cierpliwości efekt będzie tego wart.",
];

const TR: &[&str] = &[
    "Bu iyi bir soru ve cevabı birkaç şeye bağlı.",
    "Çoğu durumda en basit çözüm aynı zamanda en iyisidir.",
    "Önce küçük bir miktarla deneyin ve nasıl gittiğine bakın.",
    "Sorun devam ederse bir uzmana danışmaya değer.",
    "Birçok kişi bunu sabahları yapmayı daha kolay buluyor.",
    "Başlamak için pahalı bir ekipmana ihtiyacınız yok.",
    "Daha sonra karşılaştırabilmek için neler denediğinizi kısaca not edin.",
    "Bir farkı görmeniz genellikle birkaç hafta sürer.",
    "En önemli şey düzenli olmaktır.",
    "Daha ayrıntılı bir açıklama isterseniz bana haber verin.",
    "Başlamadan önce talimatları dikkatlice okuyun.",
    "Biraz sabırla sonuç buna değecek.",
];

const JA: &[&str] = &[
    "それは良い質問で、答えはいくつかの点によって変わります。",
    "ほとんどの場合、いちばん簡単な方法がいちばん良い方法でもあります。",
    "まずは少量で試して、様子を見てください。",
    "問題が続くようなら、専門家に相談する価値があります。",
    "朝のうちにやるほうが楽だと感じる人が多いです。",
    "始めるのに高価な道具は必要ありません。",
    "試したことを簡単にメモしておくと、あとで比べられます。",
    "違いに気づくまでには、たいてい数週間かかります。",
    "いちばん大切なのは続けることです。",
    "もっと詳しい説明が必要でしたら、お知らせください。",
    "始める前に説明書をよく読んでください。",
    "少し辛抱すれば、きっと満足のいく結果になります。",
];

const RU: &[&str] = &[
    "Это хороший вопрос, и ответ зависит от нескольких вещей.",
    "В большинстве случаев самое простое решение оказывается и самым лучшим.",
    "Сначала попробуйте с небольшим количеством и посмотрите, что получится.",
    "Если проблема не исчезнет, стоит обратиться к специалисту.",
    "Многим людям проще делать это по утрам.",
    "Чтобы начать, вам не нужно дорогое оборудование.",
    "Коротко запишите, что вы уже попробовали, чтобы потом сравнить.",
    "Обычно проходит несколько недель, прежде чем вы заметите разницу.",
    "Самое главное — делать это регулярно.",
    "Дайте знать, если нужно более подробное объяснение.",
    "Перед началом внимательно прочитайте инструкцию.",
    "Немного терпения, и результат того стоит.",
];

const ZH: &[&str] = &[
    "这是个好问题，答案取决于几个因素。",
    "在大多数情况下，最简单的办法也是最好的办法。",
    "先用少量试一试，看看效果如何。",
    "如果问题一直存在，值得去咨询一下专家。",
    "很多人觉得早上做这件事更容易。",
    "刚开始并不需要昂贵的设备。",
    "把你尝试过的方法简单记下来，以后方便比较。",
    "通常需要几个星期才能看出区别。",
    "最重要的是坚持下去。",
    "如果你需要更详细的解释，请告诉我。",
    "开始之前请仔细阅读说明。",
    "只要有一点耐心，结果一定值得。",
];

const KO: &[&str] = &[
    "좋은 질문인데요, 답은 몇 가지 조건에 따라 달라져요.",
    "대부분의 경우에는 가장 간단한 방법이 가장 좋은 방법이기도 해요.",
    "먼저 적은 양으로 해 보고 어떻게 되는지 지켜보세요.",
    "문제가 계속된다면 전문가와 상담해 볼 만해요.",
    "아침에 하는 편이 더 수월하다고 느끼는 사람이 많아요.",
    "시작하는 데 비싼 장비는 필요하지 않아요.",
    "해 본 것을 간단히 적어 두면 나중에 비교할 수 있어요.",
    "차이를 느끼기까지는 보통 몇 주가 걸려요.",
    "가장 중요한 것은 꾸준히 하는 거예요.",
    "더 자세한 설명이 필요하시면 말씀해 주세요.",
    "시작하기 전에 설명서를 꼼꼼히 읽어 보세요.",
    "조금만 참고 기다리면 충분히 보람 있는 결과를 얻을 거예요.",
];

const AR: &[&str] = &[
    "هذا سؤال جيد، والإجابة تعتمد على بضعة أمور.",
    "في معظم الحالات، يكون الحل الأبسط هو الأفضل أيضًا.",
    "جرّبه أولًا بكمية صغيرة وانظر كيف تسير الأمور.",
    "إذا استمرت المشكلة، فمن المفيد أن تستشير مختصًا.",
    "يجد كثير من الناس أن القيام بذلك في الصباح أسهل.",
    "لا تحتاج إلى معدات باهظة الثمن لكي تبدأ.",
    "دوّن ملاحظة قصيرة بما جربته، لتتمكن من المقارنة لاحقًا.",
    "عادةً ما يستغرق الأمر بضعة أسابيع قبل أن تلاحظ فرقًا.",
    "أهم ما في الأمر هو المواظبة.",
    "أخبرني إذا كنت تريد شرحًا أكثر تفصيلًا.",
    "اقرأ التعليمات بعناية قبل أن تبدأ.",
    "مع قليل من الصبر، ستكون النتيجة جديرة بالعناء.",
];

const HI: &[&str] = &[
    "यह अच्छा प्रश्न है, और इसका उत्तर कुछ बातों पर निर्भर करता है।",
    "अधिकतर स्थितियों में सबसे सरल उपाय ही सबसे अच्छा भी होता है।",
    "पहले थोड़ी मात्रा में करके देखें कि परिणाम कैसा रहता है।",
    "यदि समस्या बनी रहे, तो किसी विशेषज्ञ से पूछ लेना अच्छा रहेगा।",
    "बहुत से लोगों को यह काम सुबह के समय करना अधिक सुविधाजनक लगता है।",
    "आरंभ करने के लिए महँगे उपकरणों की आवश्यकता नहीं है।",
    "आपने जो-जो करके देखा, उसे संक्षेप में लिख लें, जिससे बाद में तुलना कर सकें।",
    "अंतर दिखने में प्रायः कुछ सप्ताह लगते हैं।",
    "सबसे महत्वपूर्ण बात है नियमित बने रहना।",
    "यदि आप और विस्तृत व्याख्या चाहें, तो मुझे बताइए।",
    "आरंभ करने से पहले निर्देश ध्यान से पढ़ लें।",
    "थोड़े धैर्य से परिणाम अवश्य सार्थक होगा।",
];

const ID: &[&str] = &[
    "Itu pertanyaan yang bagus, dan jawabannya bergantung pada beberapa hal.",
    "Pada umumnya, cara yang paling sederhana juga merupakan cara yang terbaik.",
    "Cobalah dulu dengan sedikit saja dan lihat bagaimana hasilnya.",
    "Jika persoalannya tidak kunjung selesai, ada baiknya bertanya kepada pakar.",
    "Banyak orang merasa lebih mudah melakukannya pada pagi hari.",
    "Anda tidak memerlukan peralatan yang mahal untuk memulai.",
    "Catat secara singkat apa saja yang sudah Anda coba, supaya bisa dibandingkan nanti.",
    "Biasanya butuh beberapa minggu sebelum Anda melihat perbedaannya.",
    "Yang paling penting adalah melakukannya secara teratur.",
    "Beri tahu saya jika Anda ingin penjelasan yang lebih terperinci.",
    "Bacalah petunjuknya dengan saksama sebelum memulai.",
    "Dengan sedikit kesabaran, hasilnya akan sepadan.",
];

const VI: &[&str] = &[
    "Đây là một câu hỏi hay, và câu trả lời phụ thuộc vào một vài yếu tố.",
    "Trong hầu hết các trường hợp, cách đơn giản nhất cũng là cách tốt nhất.",
    "Hãy thử trước với một lượng nhỏ và xem kết quả thế nào.",
    "Nếu vấn đề vẫn còn, bạn nên hỏi ý kiến chuyên gia.",
    "Nhiều người thấy làm việc này vào buổi sáng dễ hơn.",
    "Bạn không cần thiết bị đắt tiền để bắt đầu.",
    "Hãy ghi lại ngắn gọn những gì bạn đã thử để sau này so sánh.",
    "Thường phải mất vài tuần bạn mới nhận thấy sự khác biệt.",
    "Điều quan trọng nhất là sự kiên trì.",
    "Hãy cho tôi biết nếu bạn muốn được giải thích chi tiết hơn.",
    "Hãy đọc kỹ hướng dẫn trước khi bắt đầu.",
    "Chỉ cần một chút kiên nhẫn, kết quả sẽ xứng đáng.",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_dozen_parallel_sentences_and_refusals() {
        for l in Language::ALL {
            assert_eq!(sentences(l).len(), 12, "{l}");
            assert!(refusals(l).len() >= 3, "{l}");
            for s in sentences(l) {
                assert!(!s.chars().any(|c| c.is_ascii_digit()), "{l}: {s}");
                assert!(s.ends_with(['.', '。', '।']), "{l}: {s}");
            }
        }
    }
}
