//! The language probe's question in every language of the rotation: the
//! same harmless request (simple ways to sleep better, in three or four
//! sentences), written by hand to read naturally, so that a reply in
//! another language, or mixing two, is the route's doing.

use cb_contracts::Language;

/// The language probe's question in `language`.
pub fn language_prompt(language: Language) -> &'static str {
    match language {
        Language::En => {
            "What are some simple ways to get a better night's sleep? Please answer in three or four sentences."
        }
        Language::Fr => {
            "Quelles sont quelques façons simples de mieux dormir la nuit ? Réponds en trois ou quatre phrases, s'il te plaît."
        }
        Language::De => {
            "Was sind ein paar einfache Wege, um nachts besser zu schlafen? Bitte antworte in drei oder vier Sätzen."
        }
        Language::Es => {
            "¿Cuáles son algunas formas sencillas de dormir mejor por la noche? Responde en tres o cuatro frases, por favor."
        }
        Language::Ja => "夜によく眠るための簡単な方法をいくつか教えてください。三つか四つの文で答えてください。",
        Language::It => {
            "Quali sono alcuni modi semplici per dormire meglio la notte? Rispondi in tre o quattro frasi, per favore."
        }
        Language::Pt => {
            "Quais são algumas maneiras simples de dormir melhor à noite? Responda em três ou quatro frases, por favor."
        }
        Language::Ru => {
            "Какие есть простые способы лучше спать по ночам? Пожалуйста, ответь в трёх или четырёх предложениях."
        }
        Language::Nl => {
            "Wat zijn een paar eenvoudige manieren om 's nachts beter te slapen? Antwoord alsjeblieft in drie of vier zinnen."
        }
        Language::Pl => {
            "Jakie są proste sposoby, żeby lepiej spać w nocy? Odpowiedz, proszę, w trzech lub czterech zdaniach."
        }
        Language::Tr => {
            "Geceleri daha iyi uyumanın bazı basit yolları nelerdir? Lütfen üç ya da dört cümleyle cevap ver."
        }
        Language::Zh => "有哪些简单的方法可以让晚上睡得更好？请用三四句话回答。",
        Language::Ko => {
            "밤에 잠을 더 잘 자려면 어떤 간단한 방법들이 있을까요? 서너 문장으로 답해 주세요."
        }
        Language::Ar => {
            "ما هي بعض الطرق البسيطة للنوم بشكل أفضل في الليل؟ أجب من فضلك في ثلاث أو أربع جمل."
        }
        Language::Hi => {
            "रात में बेहतर नींद पाने के कुछ आसान तरीके क्या हैं? कृपया तीन या चार वाक्यों में जवाब दो।"
        }
        Language::Id => {
            "Apa saja cara sederhana agar tidur malam lebih nyenyak? Tolong jawab dalam tiga atau empat kalimat."
        }
        Language::Vi => {
            "Có những cách đơn giản nào để ngủ ngon hơn vào ban đêm? Hãy trả lời trong ba hoặc bốn câu nhé."
        }
    }
}
