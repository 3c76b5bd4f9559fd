/**
 * The rules of agentText.ts beyond English: what no honest listing says, in the languages most
 * used after English (Chinese, Spanish, Hindi, Arabic, Portuguese, Russian, Japanese, German,
 * French) and in Korean and Italian. Each language is a set of general rules, not sentences:
 *
 * - `override`: an order to ignore, forget or disregard the instructions (rules, prompts) before;
 * - `conceal`: an order to keep something from the user (do not tell, hide from, without telling);
 * - `persist`: an order for every later turn ("from now on");
 * - secrets: an order to fetch or hand over secret material: a file or store that holds credentials
 *   (named the same way in every language: `~/.ssh`, `.env`, `/etc/shadow`, a secret's variable),
 *   or a credential of the user's or the environment's (a password, an API key, a token) by name.
 *   An order is a verb form only an order takes (an imperative that is not also the third person:
 *   Spanish `lea`, not `lee`, which is both), or a verb of fetching or handing over next to a
 *   directive (`debes`, `请`, `ください`, "before using this tool") or a destination (a field,
 *   parameter or argument), and never one under a negation (`no incluyas`, `不要读取`).
 *
 * An honest description says what a tool does ("Lee un archivo", "读取配置文件并返回其中的设置") and
 * may forbid things ("nunca envíe contraseñas", "不要在文本中包含密码"); neither is an order to hand
 * anything over.
 *
 * The text is read lower-cased, in NFKC, with typographic apostrophes as `'`, and Arabic without
 * its vowel marks and tatweel and with its alef and yeh forms unified (the patterns are written the
 * same way). A language's rules apply to a sentence in its script; those of the languages written in
 * Latin letters to a sentence that has at least two of the language's own small words and no more
 * of English's, so that English "lies" is never German "lies" (read!).
 */

type LanguageClass = "injection" | "secrets";

export interface LanguageFinding {
  class: LanguageClass;
  reason: string;
  language: string;
}

interface Rules {
  /** The language, as BCP 47 names it. */
  id: string;
  /** Whether a sentence is in the language: its script, or its small words (Latin-script languages). */
  script?: RegExp;
  stopwords?: readonly string[];
  override?: string;
  conceal?: string;
  persist?: string;
  /** Verb forms only an order takes. */
  imperative?: string;
  /** Any form of a verb that fetches or hands data over: an order next to a directive or a destination. */
  transfer?: string;
  directive?: string;
  destination?: string;
  /** A negation right before a verb (tested on the text before it, `$`-anchored). */
  negBefore?: string;
  /** A negation right after a verb (tested on the text after it, `^`-anchored). */
  negAfter?: string;
  noun?: string;
  source?: string;
}

/** Not a letter, digit or `_` before or after: a word's edge in any script (`\b` is ASCII's only). */
const B = "(?<![\\p{L}\\p{M}\\p{N}_])";
const E = "(?![\\p{L}\\p{M}\\p{N}_])";
const words = (list: string) => `${B}(?:${list})${E}`;
const near = (n: number) => `[^.!?。！？।؟\\n]{0,${n}}?`;

const LANGUAGES: readonly Rules[] = [
  {
    id: "es",
    stopwords: [
      "el",
      "los",
      "las",
      "del",
      "y",
      "que",
      "para",
      "con",
      "su",
      "por",
      "una",
      "es",
      "este",
      "esta",
      "al",
    ],
    override: `${words("ignora|ignore|ignoren|ignorad|olvida|olvide|olviden|olvidad|descarta|descarte|omite|omita|haz caso omiso de|no hagas caso a")}${near(40)}${words("instrucciones|instrucción|indicaciones|órdenes|ordenes|reglas|directrices|directivas")}`,
    conceal: [
      `${words("no|nunca|jamás")}\\s+(?:(?:le|les|lo|la|se|nada|esto)\\s+){0,2}(?:digas|diga|digan|menciones|mencione|cuentes|cuente|informes|informe|reveles|revele|comuniques|comunique|avises|avise|notifiques|notifique)${E}${near(60)}${words("usuari[oa]s?")}`,
      `${words("sin")}\\s+(?:decir|decirle|decírselo|avisar|avisarle|informar|informarle|notificar|mencionar)\\p{L}*${near(30)}${words("usuari[oa]s?")}`,
      `${words("oculta|oculte|ocultar|esconde|esconda")}${near(50)}${words("al|del|a los|de los")}\\s+usuari`,
      `${words("que|para que")}\\s+(?:el|la)\\s+usuari[oa]\\s+no\\s+(?:lo\\s+)?(?:sepa|note|vea|se entere)${E}`,
    ].join("|"),
    persist: words(
      "a partir de ahora|de ahora en adelante|desde ahora|en (?:todas las|cada una de las) (?:respuestas|conversaciones) (?:futuras|siguientes)",
    ),
    imperative: words(
      "lea|lean|léelo|léela|léelos|abra|ábrelo|envíe|envíen|envíalo|envíala|envíalos|incluya|incluyan|inclúyelo|inclúyela|inclúyelos|pase|pasen|pásalo|pásala|adjunte|adjunten|adjúntalo|copie|copien|cópialo|suba|súbelo|agregue|agréguelo|agrégalo|añada|añádelo|ponga|ponlo|pon|inserte|insértalo|proporcione|proporciónalo|entregue|entrégalo|comparta|compártelo|reenvíe|reenvíalo|extraiga|pegue|pégalo|mande|mándalo|transmita",
    ),
    transfer: words(
      "lee|leer|abre|abrir|envía|enviar|incluye|incluir|pasa|pasar|adjunta|adjuntar|copia|copiar|sube|subir|agrega|agregar|añade|añadir|poner|inserta|insertar|proporciona|proporcionar|entrega|entregar|comparte|compartir|reenvía|reenviar|manda|mandar|transmite|transmitir|extrae|extraer",
    ),
    directive: words(
      "debes|debe|deberás|deberá|tienes que|tiene que|hay que|es necesario|es obligatorio|asegúrate de|asegúrese de|no olvides|no olvide|por favor|antes de (?:usar|llamar|invocar|ejecutar)(?: (?:esta|la))? herramienta",
    ),
    destination: `${words("en|a|al|como|dentro de")}\\s+(?:(?:el|la|los|las|este|esta|cada)\\s+)?${words("campo|parámetro|parametro|argumento|atributo|propiedad|respuesta")}`,
    negBefore: `${words("no|nunca|jamás|ni|tampoco")}\\s+(?:\\p{L}+\\s+)?$`,
    noun: words(
      "contraseñas?|claves? (?:de (?:la )?api|api|privadas?|secretas?|ssh|de acceso)|llaves? privadas?|tokens?|credenciales|secretos|cookies",
    ),
    source: words(
      "del usuario|de la usuaria|de los usuarios|del entorno|variables de entorno|del sistema|tod[oa]s (?:las|los|sus)|almacenad[oa]s|guardad[oa]s",
    ),
  },
  {
    id: "pt",
    stopwords: [
      "o",
      "os",
      "do",
      "da",
      "dos",
      "das",
      "e",
      "em",
      "no",
      "na",
      "para",
      "com",
      "seu",
      "sua",
      "que",
      "um",
      "uma",
      "é",
      "ao",
    ],
    override: `${words("ignore|ignora|ignorem|esqueça|esqueca|esqueçam|desconsidere|desconsidera|desconsiderem|descarte")}${near(40)}${words("instruções|instrucoes|instrução|orientações|ordens|regras|diretrizes|diretivas|comandos")}`,
    conceal: [
      `${words("não|nao|nunca|jamais")}\\s+(?:(?:lhe|o|a|os|as|nada|isso|isto)\\s+){0,2}(?:conte|contem|diga|digam|mencione|mencionem|informe|informem|revele|revelem|avise|avisem|fale|falem|comunique|notifique)${E}${near(60)}${words("usuári[oa]s?|usuari[oa]s?|utilizador(?:es|a)?")}`,
      `${words("sem")}\\s+(?:contar|dizer|avisar|informar|notificar|mencionar)${near(30)}${words("usuári[oa]s?|usuari[oa]s?|utilizador(?:es|a)?")}`,
      `${words("esconda|oculte|esconder|ocultar")}${near(50)}${words("do|ao|dos|aos")}\\s+(?:usuári|usuari|utilizador)`,
    ].join("|"),
    persist: words(
      "a partir de agora|de agora em diante|daqui (?:para|pra) (?:a )?frente|em todas as (?:respostas|conversas) (?:futuras|seguintes)",
    ),
    imperative: words(
      "leia|leiam|abra|abram|envie|enviem|inclua|incluam|passe|passem|anexe|anexem|copie|copiem|coloque|coloquem|ponha|ponham|insira|insiram|adicione|adicionem|carregue|forneça|forneçam|compartilhe|encaminhe|cole|colem|mande|mandem|transmita",
    ),
    transfer: words(
      "envia|enviar|inclui|incluir|passa|passar|anexa|anexar|copia|copiar|coloca|colocar|insere|inserir|adiciona|adicionar|ler|abre|abrir|manda|mandar|transmite|transmitir|compartilha|compartilhar|encaminha|encaminhar|fornece|fornecer",
    ),
    directive: words(
      "deve|devem|deverá|tem que|têm que|precisa|precisam|é necessário|é obrigatório|certifique-se de|não se esqueça de|por favor|antes de (?:usar|chamar|invocar|executar)(?: (?:esta|a))? ferramenta",
    ),
    destination: `${words("no|na|ao|à|como|em")}\\s+(?:(?:o|a|este|esta|cada)\\s+)?${words("campo|parâmetro|parametro|argumento|atributo|propriedade|resposta")}`,
    negBefore: `${words("não|nao|nunca|jamais|nem")}\\s+(?:\\p{L}+\\s+)?$`,
    noun: words(
      "senhas?|chaves? (?:de api|da api|api|privadas?|secretas?|ssh|de acesso)|tokens?|credenciais|segredos|cookies",
    ),
    source: words(
      "do usuário|do usuario|da usuária|dos usuários|do utilizador|do ambiente|variáveis de ambiente|do sistema|tod[oa]s (?:as|os|suas|seus)|armazenad[oa]s|salv[oa]s|guardad[oa]s",
    ),
  },
  {
    id: "fr",
    stopwords: [
      "le",
      "les",
      "du",
      "des",
      "et",
      "dans",
      "pour",
      "avec",
      "son",
      "sa",
      "que",
      "une",
      "est",
      "ce",
      "cette",
      "vous",
      "ne",
      "pas",
      "au",
    ],
    override: `${words("ignore|ignorez|ignorer|ignores|oublie|oubliez|oublier|néglige|négligez|fais abstraction|faites abstraction|ne tiens pas compte|ne tenez pas compte")}${near(40)}${words("instructions?|consignes?|directives?|règles|ordres|commandes")}`,
    conceal: [
      `(?:${words("ne")}\\s*|${B}n')(?:(?:le|la|les|lui|leur|en|rien|jamais|surtout)\\s+|l')*(?:dis|dites|mentionne|mentionnez|signale|signalez|révèle|révélez|informe|informez|préviens|prévenez|raconte|racontez|avertis|avertissez|parle|parlez)${E}${near(50)}utilisat(?:eur|rice)s?${E}`,
      `${words("sans")}\\s+(?:(?:le|en|lui)\\s+)?(?:dire|prévenir|informer|avertir|mentionner|signaler)${E}${near(30)}utilisat`,
      `${words("cache|cachez|dissimule|dissimulez|masque|masquez")}${near(50)}${words("à|aux")}\\s+(?:l')?utilisat`,
      `l'utilisat(?:eur|rice)\\s+ne\\s+(?:doit|devra|doivent)\\s+(?:pas|jamais)\\s+(?:le\\s+)?(?:savoir|voir|remarquer|apprendre)${E}`,
    ].join("|"),
    persist: words(
      "à partir de maintenant|dorénavant|dans toutes (?:tes|vos|les) (?:réponses|conversations) (?:futures|suivantes)",
    ),
    imperative: words(
      "lis|lisez|ouvrez|envoyez|incluez|transmettez|copiez|collez|ajoutez|joignez|mettez|insérez|téléversez|fournissez|passez|donnez|partagez|transférez|récupérez",
    ),
    transfer: words(
      "lire|ouvrir|ouvre|envoyer|envoie|inclure|inclus|transmettre|transmets|copier|copie|coller|colle|ajouter|ajoute|joindre|joins|mettre|mets|insérer|insère|téléverser|fournir|passer|passe|donner|donne|partager|partage|transférer|récupérer|récupère",
    ),
    directive: words(
      "tu dois|vous devez|il faut|il faudra|veuillez|merci de|pensez à|n'oubliez pas de|assurez-vous de|devez|dois|doit|avant (?:d'utiliser|d'appeler|d'invoquer) (?:cet|l') ?outil",
    ),
    destination: `${words("dans|comme|en")}\\s+(?:(?:le|la|ce|cet|cette|chaque)\\s+|l')?${words("champ|paramètre|parametre|argument|attribut|propriété|réponse")}`,
    negBefore: `(?:${words("ne|jamais|pas|aucun")}|${B}n')\\s*(?:\\p{L}+\\s+)?$`,
    noun: words(
      "mots? de passe|clés? (?:d'api|api|privées?|secrètes?|ssh|d'accès)|jetons?|tokens?|identifiants|secrets|cookies",
    ),
    source: words(
      "de l'utilisat(?:eur|rice)|des utilisateurs|de l'environnement|variables d'environnement|du système|tou(?:s|tes) (?:les|ses)|stocké(?:e)?s|enregistré(?:e)?s",
    ),
  },
  {
    id: "de",
    stopwords: [
      "der",
      "die",
      "das",
      "den",
      "dem",
      "und",
      "ist",
      "nicht",
      "mit",
      "für",
      "von",
      "ein",
      "eine",
      "zu",
      "im",
      "sie",
      "du",
      "auf",
    ],
    override: [
      `${words("ignoriere|ignorier|ignorieren sie|ignoriert|vergiss|vergesst|vergessen sie|missachte|missachten sie|übergehe|übergehen sie|verwirf|verwerfen sie")}${near(40)}${words("anweisungen|anweisung|instruktionen|vorgaben|befehle|regeln|anordnungen|richtlinien")}`,
      `${words("vorherigen|bisherigen|obigen|früheren|vorigen|alle|sämtliche")}${near(20)}${words("anweisungen|instruktionen|vorgaben|regeln|befehle")}${near(20)}${words("ignorieren|vergessen|missachten|übergehen")}`,
    ].join("|"),
    conceal: [
      `${words("sag|sage|sagt|sagen sie|erzähl|erzähle|erzählen sie|teile|teilen sie|verrate|verraten sie|erwähne|erwähnen sie|melde|melden sie")}${near(40)}${words("dem|den")}\\s+(?:benutzer|nutzer|anwender)(?:n|in|innen)?${E}${near(30)}${words("nicht|nichts|niemals|nie")}`,
      `${words("nicht|nichts|niemals|nie|keinesfalls")}${near(30)}${words("dem|den")}\\s+(?:benutzer|nutzer|anwender)(?:n|in)?\\s+(?:sagen|mitteilen|erzählen|verraten|erwähnen|melden)${E}`,
      `${words("ohne")}\\s+(?:dass\\s+)?(?:der|den|dem)\\s+(?:benutzer|nutzer|anwender)${near(40)}(?:merkt|erfährt|bemerkt|weiß|mitbekommt|zu informieren|zu benachrichtigen|zu fragen)${E}`,
      `${words("verbirg|verberge|verstecke|verheimliche")}${near(40)}vor\\s+dem\\s+(?:benutzer|nutzer|anwender)`,
      `vor\\s+dem\\s+(?:benutzer|nutzer|anwender)\\s+(?:verbergen|verstecken|geheim halten|verheimlichen)${E}`,
    ].join("|"),
    persist: words(
      "von nun an|fortan|ab jetzt (?:immer|bei jeder|in jeder)|in allen (?:künftigen|zukünftigen|weiteren|folgenden) (?:antworten|nachrichten|unterhaltungen|gesprächen)",
    ),
    imperative: words(
      "lies|öffne|sende|schicke|schick|übermittle|übermittel|füge|hänge|kopiere|kopier|lade|gib|trage|schreibe|leite|(?:lesen|öffnen|senden|schicken|übermitteln|fügen|hängen|kopieren|laden|geben|tragen|schreiben|leiten) sie",
    ),
    transfer: words(
      "lesen|auslesen|öffnen|senden|schicken|übermitteln|einfügen|anhängen|kopieren|hochladen|angeben|mitsenden|eintragen|weiterleiten|mitschicken",
    ),
    directive: words(
      "du musst|sie müssen|musst|müssen|muss|sollst|sollen|soll|bitte|vergiss nicht|denke daran|stelle sicher|bevor du (?:dieses|das) (?:werkzeug|tool)|vor (?:der|jeder) (?:nutzung|verwendung) (?:dieses|des) (?:werkzeugs|tools)",
    ),
    destination: `${words("im|ins|in das|in dem|als|an den|an das")}\\s+${words("feld|parameter|argument|attribut|antwort")}`,
    negBefore: `${words("nicht|nie|niemals|kein|keine|keinen")}\\s+(?:\\p{L}+\\s+)?$`,
    negAfter: `^\\s+(?:\\p{L}+\\s+){0,3}?${words("nicht|nie|niemals|nichts|keine|keinen")}`,
    noun: words(
      "passwörter|passwort|kennwörter|kennwort|api-schlüssel|api-schlüsseln|privaten? schlüssel|geheimen? schlüssel|token|tokens|zugangsdaten|anmeldedaten|geheimnisse|cookies",
    ),
    source: words(
      "des benutzers|des nutzers|der benutzer|der nutzer|aus der umgebung|der umgebung|umgebungsvariablen|alle|aller|sämtliche|gespeicherten",
    ),
  },
  {
    id: "it",
    stopwords: [
      "il",
      "lo",
      "gli",
      "di",
      "del",
      "della",
      "e",
      "nel",
      "nella",
      "per",
      "con",
      "che",
      "un",
      "una",
      "è",
      "non",
      "al",
    ],
    override: `${words("ignora|ignorate|ignori|dimentica|dimenticate|dimentichi|trascura|trascurate|non considerare")}${near(40)}${words("istruzioni|indicazioni|regole|ordini|direttive|comandi")}`,
    conceal: [
      `${words("non|mai")}\\s+(?:(?:lo|la|gli|le|nulla|niente)\\s+)?(?:dire|dirlo|dirgli|dirle|dica|menzionare|menzioni|informare|informi|rivelare|riveli|avvisare|avvisi|raccontare|racconti|segnalare)${E}${near(50)}utent`,
      `${words("senza")}\\s+(?:dirlo|dire|avvisare|informare)${near(30)}utent`,
      `${words("nascondi|nascondete|nasconda")}${near(50)}(?:all'|dall')utent`,
    ].join("|"),
    persist: words(
      "d'ora in (?:poi|avanti)|da adesso in poi|da ora in poi|in tutte le (?:risposte|conversazioni) future",
    ),
    imperative: words(
      "leggi|leggete|legga|apri|aprite|apra|includi|includete|includa|inserisci|inserite|inserisca|aggiungi|aggiungete|aggiunga|fornisci|fornite|fornisca|metti|mettete|metta|invii|inviate|passate|allegate|alleghi|copiate|caricate|carichi|mandate|condividi|inoltrate",
    ),
    transfer: words(
      "invia|passa|allega|copia|carica|manda|inoltra|leggere|inviare|includere|passare|allegare|copiare|inserire|aggiungere|caricare|fornire|mandare|mettere|condividere|inoltrare",
    ),
    directive: words(
      "devi|deve|dovete|è necessario|bisogna|assicurati di|non dimenticare di|per favore|prima di (?:usare|chiamare|invocare) (?:questo|lo) ?strumento",
    ),
    destination: `${words("nel|nella|nello|come|in")}\\s+${words("campo|parametro|argomento|attributo|proprietà|risposta")}`,
    negBefore: `${words("non|mai|né")}\\s+(?:\\p{L}+\\s+)?$`,
    noun: words("password|chiavi? (?:api|private?|segrete?|ssh)|token|credenziali|segreti|cookie"),
    source: words(
      "dell'utente|degli utenti|dell'ambiente|variabili d'ambiente|del sistema|tutt[ei] (?:le|i|gli)|memorizzat[ei]|salvat[ei]",
    ),
  },
  {
    id: "ru",
    script: /[\u0400-\u04ff]/,
    override: `${words("игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|отбрось|отбросьте|не обращай внимания на|не обращайте внимания на|не учитывай|не учитывайте")}${near(40)}(?:инструкци|указани|правил|команд|распоряжени|промпт|директив)`,
    conceal: [
      `${words("не")}\\s+(?:(?:об этом|ничего|этого|это)\\s+)?(?:сообщай|сообщайте|говори|говорите|рассказывай|рассказывайте|упоминай|упоминайте|уведомляй|уведомляйте|информируй|информируйте)${E}${near(60)}пользовател`,
      `${words("без")}\\s+(?:ведома|уведомления|сообщения|согласия)\\s+пользовател`,
      `${words("скрой|скройте|скрывай|скрывайте|утаи|утаите")}${near(50)}${words("от")}\\s+пользовател`,
      `пользовател\\p{L}*\\s+не\\s+(?:нужно|надо|следует|стоит)\\s+(?:знать|сообщать|говорить)${E}`,
    ].join("|"),
    persist: words(
      "с этого момента|отныне|впредь|во всех (?:последующих|будущих|дальнейших) (?:ответах|сообщениях|разговорах|диалогах)",
    ),
    imperative: words(
      "прочитай|прочитайте|прочти|прочтите|считай|считайте|открой|откройте|отправь|отправьте|пошли|пошлите|передай|передайте|вставь|вставьте|включи|включите|добавь|добавьте|приложи|приложите|скопируй|скопируйте|загрузи|загрузите|укажи|укажите|помести|поместите|перешли|перешлите|выведи|выведите|сообщи|сообщите",
    ),
    transfer: words(
      "прочитать|отправить|передать|вставить|добавить|приложить|скопировать|загрузить|указать|поместить|переслать|вывести|включить",
    ),
    directive: words(
      "ты должен|вы должны|должен|должны|должно|нужно|необходимо|обязательно|пожалуйста|не забудь|не забудьте|перед (?:использованием|вызовом) (?:этого )?инструмента",
    ),
    destination: `${words("в|во")}\\s+${words("поле|параметр|параметре|аргумент|аргументе|атрибут|ответ|ответе")}|${words("как")}\\s+${words("параметр|аргумент")}`,
    negBefore: `${words("не|никогда|ни")}\\s+(?:\\p{L}+\\s+)?$`,
    noun: words(
      "парол\\p{L}*|токен\\p{L}*|api[- ]?ключ\\p{L}*|ключ\\p{L}* api|секретн\\p{L}* ключ\\p{L}*|приватн\\p{L}* ключ\\p{L}*|закрыт\\p{L}* ключ\\p{L}*|учётн\\p{L}* данн\\p{L}*|учетн\\p{L}* данн\\p{L}*|секреты|cookie",
    ),
    source: words("пользовател\\p{L}*|все|всех|окружени\\p{L}*|сохранённ\\p{L}*|сохраненн\\p{L}*"),
  },
  {
    id: "zh",
    script: /[\u3400-\u9fff\uf900-\ufaff]/,
    override:
      "(?:忽略|忽視|忽视|无视|無視|忘记|忘記|不要理会|不要理會|不理会|不理會|跳过|跳過|抛开|拋開)[^。！？\\n]{0,12}?(?:之前|以前|先前|此前|上面|上述|前面|原来|原來|所有|全部|一切|任何)[^。！？\\n]{0,8}?(?:指示|指令|说明|說明|规则|規則|提示词|提示詞|提示|命令|要求|设定|設定)",
    conceal: [
      "(?:不要|别|別|切勿|请勿|請勿|不得|禁止|千万不要|千萬不要|勿)[^。！？\\n]{0,6}?(?:告诉|告訴|通知|提醒|告知|提及|提到|透露给|透露給|让|讓)[^。！？\\n]{0,8}?(?:用户|用戶|使用者)",
      "(?:对|對|向)(?:用户|用戶|使用者)(?:隐瞒|隱瞞|保密)",
      "(?:瞒着|瞞著|背着|背著)(?:用户|用戶|使用者)",
      "(?:不让|不讓)(?:用户|用戶|使用者)(?:知道|发现|發現|察觉|察覺|看到)",
    ].join("|"),
    persist:
      "从现在起|從現在起|从现在开始|從現在開始|从今以后|從今以後|在(?:之后|之後|以后|以後|今后|今後)的(?:所有|每次|每个|每個|每一)(?:回复|回覆|回答|对话|對話|消息|訊息)|(?:在|于|於)每(?:次|一次|条|條)(?:回复|回覆|回答)中",
    // An order: after 请/务必/必须, or in the 将/把 construction that moves its object somewhere.
    imperative:
      "(?:请|請|务必|務必|必须|必須|一定要|需要先|须先|須先)(?:(?!不|别|別|勿)[^。！？\\n]){0,4}?(?:读取|讀取|读|讀|打开|打開|发送|發送|上传|上傳|附上|附加|包含|放入|填入|填写|填寫|传入|傳入|传递|傳遞|复制|複製|拷贝|拷貝|粘贴|貼上|提供|提交|输出|輸出|转发|轉發|加入|写入|寫入|获取|獲取|收集)|(?:将|將|把)(?:(?!不|别|別|勿)[^。！？\\n]){1,40}?(?:复制|複製|拷贝|拷貝|放入|放到|放进|放進|填入|填到|粘贴|貼上|发送|發送|附加|附上|传入|傳入|写入|寫入|上传|上傳|加入|转发|轉發)",
    transfer:
      "附上|附加|放入|放到|填入|填到|传入|傳入|粘贴|貼上|上传|上傳|转发|轉發|发送到|發送到|发送给|發送給|发给|發給|写入|寫入|包含在|加入到|加到|复制到|複製到|拷贝到|拷貝到",
    destination: "参数|參數|字段|欄位|栏位|属性|屬性|回复|回覆|回答",
    negBefore:
      "(?:不要|别|別|切勿|请勿|請勿|不得|禁止|不能|不可|勿|不会|不會|绝不|絕不|从不|從不|不)[^。！？\\n]{0,3}$",
    noun: "密码|密碼|口令|令牌|api ?密钥|api ?金鑰|api ?key|密钥|密鑰|金鑰|私钥|私鑰|凭据|憑據|凭证|憑證|cookie",
    source: "用户的|用戶的|使用者的|所有|全部|环境变量|環境變數|环境中|環境中|存储的|儲存的|保存的",
  },
  {
    id: "ja",
    script: /[\u3040-\u30ff]/,
    override:
      "(?:これまでの|以前の|前の|上記の|先の|上の|すべての|全ての|既存の)[^。！？\\n]{0,12}?(?:指示|命令|ルール|指令|プロンプト)[^。！？\\n]{0,8}?(?:を|は)?(?:無視|忘れ|破棄)",
    conceal: [
      "(?:ユーザー|ユーザ|利用者|使用者)(?:に|には|へ|へは)[^。！？\\n]{0,12}?(?:言わ|伝え|教え|知らせ|通知し|報告し|話さ)(?:ない|ず|るな)",
      "(?:ユーザー|ユーザ|利用者)に(?:は)?(?:秘密|内緒)",
      "(?:ユーザー|ユーザ|利用者)に(?:知られ|気づかれ|気付かれ|悟られ)(?:ない|ず)",
    ].join("|"),
    persist:
      "これからは|今後ずっと|今後(?:の)?(?:すべて|全て)の(?:回答|応答|返信|会話)|以降(?:の)?(?:すべて|全て)の(?:回答|応答|返信|会話)",
    imperative:
      "(?:読み取|読み込|読ん|開い|送信し|送っ|添付し|含め|入れ|渡し|貼り付け|コピーし|アップロードし|提供し|転送し|書き込ん|取得し)(?:(?!ない|ず|ません)[^。！？\\n]){0,6}?(?:ください|下さい|なさい|てから|ておいて)|(?:必ず|まず)[^。！？\\n]{0,20}?(?:読み取|読み込|送信|添付|含め|入れ|渡し|貼り付|アップロード|転送)",
    transfer: "入れ|渡し|添付|貼り付|送信|送っ|アップロード|転送|含め|書き込",
    destination: "引数|パラメータ|パラメーター|フィールド|項目|返信|回答",
    negAfter: "^[^。！？\\n]{0,3}?(?:ない|ず|ぬ|ません)",
    noun: "パスワード|トークン|api ?キー|api ?鍵|秘密鍵|認証情報|資格情報|クレデンシャル|シークレット|クッキー|アクセスキー",
    source: "ユーザーの|ユーザの|利用者の|すべての|全ての|環境変数|保存された|保存されている",
  },
  {
    id: "ko",
    script: /[\uac00-\ud7af]/,
    override:
      "(?:이전|앞의|위의|모든|기존|앞선)[^.!?\\n]{0,12}?(?:지시|명령|지침|규칙|프롬프트)[^.!?\\n]{0,8}?(?:을|를|은|는)?\\s*(?:무시|잊)",
    conceal:
      "(?:사용자|유저|이용자)(?:에게|한테|께)[^.!?\\n]{0,12}?(?:알리지|말하지|전하지|보고하지|알려주지|언급하지)\\s*(?:마|말)",
    persist: "지금부터|이제부터|앞으로 (?:모든|항상)",
    imperative:
      "(?:읽|넣|보내|첨부하|포함하|전달하|복사하|업로드하|입력하)(?:(?!지|않|못)[^.!?\\n]){0,3}?(?:세요|십시오|어라|아라|주세요)",
    transfer: "넣|보내|첨부|전달|업로드|입력",
    destination: "인자|매개변수|파라미터|필드|응답",
    negAfter: "^[^.!?\\n]{0,4}?(?:지\\s*(?:마|말|않)|않|못)",
    noun: "비밀번호|패스워드|토큰|api ?키|비밀 ?키|개인 ?키|자격 ?증명|인증 ?정보|쿠키",
    source: "사용자의|모든|환경 ?변수|저장된",
  },
  {
    id: "hi",
    script: /[\u0900-\u097f]/,
    override:
      "(?:पिछले|पिछली|पिछला|पहले के|पहले दिए|पूर्व|ऊपर के|ऊपर दिए|सभी|सारे|सारी)[^।!?\\n]{0,24}?(?:निर्देशों|निर्देश|आदेशों|आदेश|नियमों|नियम|हिदायतों)[^।!?\\n]{0,16}?(?:को\\s+)?(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल|अवहेलना|दरकिनार|ध्यान न)",
    conceal: [
      "(?:उपयोगकर्ता|यूज़र|यूजर|उपयोक्ता|प्रयोक्ता)\\s+(?:को|से)[^।!?\\n]{0,30}?(?:न|मत|नहीं)\\s+(?:बताएं|बताएँ|बताओ|बताना|बताइए|बताइये|बताये|बताए|कहें|कहना|कहो)",
      "(?:उपयोगकर्ता|यूज़र|यूजर)\\s+से\\s+(?:छिपाएं|छिपाएँ|छिपाओ|छुपाएं|छुपाओ|छिपाकर|छिपा कर)",
      "(?:उपयोगकर्ता|यूज़र|यूजर)\\s+को\\s+(?:बताए|बताये)\\s+बिना",
    ].join("|"),
    persist: "अब से|आज से आगे|भविष्य के सभी (?:उत्तरों|जवाबों)",
    imperative: `(?<![\\p{L}\\p{M}])(?:पढ़ें|पढ़ो|पढ़िए|पढ़िये|भेजें|भेजो|भेजिए|भेजिये|डालें|डालो|डालिए|जोड़ें|जोड़ो|जोड़िए|शामिल करें|शामिल करो|संलग्न करें|कॉपी करें|अपलोड करें|दीजिए|प्रदान करें|खोलें|खोलो|चिपकाएं|चिपकाएँ|लिखें|लिखो)(?![\\p{L}\\p{M}])`,
    negBefore: "(?<![\\p{L}\\p{M}])(?:न|मत|नहीं)\\s+$",
    noun: "पासवर्ड|टोकन|एपीआई कुंजी|api कुंजी|कुंजी|क्रेडेंशियल|गुप्त कुंजी|निजी कुंजी",
    source: "उपयोगकर्ता के|उपयोगकर्ता की|उपयोगकर्ता का|सभी|सारे|पर्यावरण|एनवायरनमेंट|संग्रहीत|सहेजे",
  },
  {
    id: "ar",
    script: /[\u0600-\u06ff]/,
    override:
      "(?:تجاهل|تجاهلي|تجاهلوا|انس|انسي|انسوا|أهمل|أهملي|تخط|تخطى|تخطي|لا تلتزم ب|لا تتبع)[^.!?؟\\n]{0,30}?(?:التعليمات|تعليمات|الأوامر|أوامر|التوجيهات|توجيهات|القواعد|قواعد|الإرشادات|إرشادات)",
    conceal: [
      "(?:لا|ولا|دون أن)\\s*(?:تخبر|تخبري|تخبروا|تذكر|تذكري|تبلغ|تبلغي|تعلم|تعلمي|تقل|تقولي|تطلع|تطلعي)[^.!?؟\\n]{0,30}?(?:المستخدم|للمستخدم|المستخدمين)",
      "(?:دون|بدون)\\s+(?:إخبار|علم|إبلاغ|إعلام|معرفة)\\s+المستخدم",
      "(?:أخف|أخفي)[^.!?؟\\n]{0,30}?(?:عن|من)\\s+المستخدم",
    ].join("|"),
    persist:
      "من الآن فصاعدا|من الآن وصاعدا|في جميع (?:الردود|الإجابات|المحادثات) (?:القادمة|المستقبلية|اللاحقة)",
    imperative:
      "(?:^|[\\s،,:؛(])[وف]?(?:اقرأ|إقرأ|أرسل|أرسلي|ضع|ضعي|أرفق|أرفقي|أضف|أضيفي|انسخ|انسخي|ارفع|ارفعي|أدرج|مرر|مرري|أعط|أعطي|الصق|الصقي|افتح|افتحي)",
    // The verbal nouns and second-person forms of fetching and handing over, after "please" or "you must".
    transfer:
      "(?:^|[\\s،,:؛(])[وفبل]?(?:إرفاق|إرسال|نسخ|وضع|إدراج|إضافة|قراءة|لصق|تمرير|رفع|ترسل|تضع|ترفق|تقرأ|تنسخ|تضيف|تلصق)",
    directive: "يرجى|رجاء|الرجاء|من فضلك|يجب|عليك|لا بد",
    destination: "الحقل|حقل|المعامل|معامل|الوسيط|وسيط",
    negBefore: "(?:^|\\s)(?:لا|ولا|لن|لم|دون)\\s*$",
    noun: "كلمة المرور|كلمات المرور|كلمة السر|كلمات السر|رمز الوصول|رموز الوصول|الرمز المميز|مفتاح api|مفاتيح api|المفتاح الخاص|المفاتيح الخاصة|المفتاح السري|بيانات الاعتماد|بيانات الدخول|الأسرار",
    source: "المستخدم|جميع|كل|البيئة|متغيرات البيئة|المخزنة|المحفوظة",
  },
];

/** Arabic as the rules read it: no vowel marks or tatweel, one alef, one yeh. */
function arabic(text: string): string {
  return text
    .replace(/[\u064B-\u065F\u0670\u0640]/g, "")
    .replace(/[\u0623\u0625\u0622\u0671]/g, "\u0627")
    .replace(/\u0649/g, "\u064A");
}

/** A text as the rules read it, and their patterns are written (see the module's comment). */
function reading(text: string): string {
  const plain = text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\u2018\u2019\u02BC]/g, "'");
  return /[\u0600-\u06ff]/.test(plain) ? arabic(plain) : plain;
}

interface Compiled {
  id: string;
  script?: RegExp;
  stopwords?: ReadonlySet<string>;
  override?: RegExp;
  conceal?: RegExp;
  persist?: RegExp;
  imperative?: RegExp;
  transfer?: RegExp;
  directive?: RegExp;
  destination?: RegExp;
  negBefore?: RegExp;
  negAfter?: RegExp;
  noun?: RegExp;
  source?: RegExp;
}

const compiled = new Map<string, Compiled>();

/** A language's patterns, compiled when a sentence in it is first read. */
function rules(language: Rules): Compiled {
  const done = compiled.get(language.id);
  if (done) return done;
  // Patterns are written in lower case: only normalized as the text is (NFKC, Arabic's letters).
  const make = (source: string | undefined, flags = "u") =>
    source === undefined ? undefined : new RegExp(arabic(source.normalize("NFKC")), flags);
  const made: Compiled = {
    id: language.id,
    script: language.script,
    stopwords: language.stopwords ? new Set(language.stopwords) : undefined,
    override: make(language.override),
    conceal: make(language.conceal),
    persist: make(language.persist),
    imperative: make(language.imperative, "gu"),
    transfer: make(language.transfer, "gu"),
    directive: make(language.directive),
    destination: make(language.destination),
    negBefore: make(language.negBefore),
    negAfter: make(language.negAfter),
    noun: make(language.noun),
    source: make(language.source),
  };
  compiled.set(language.id, made);
  return made;
}

/** English's small words: a sentence with as many of them is English, whatever else it holds. */
const ENGLISH = new Set([
  "the",
  "and",
  "of",
  "to",
  "is",
  "for",
  "with",
  "this",
  "that",
  "it",
  "you",
  "your",
  "be",
  "are",
  "from",
  "an",
  "on",
  "or",
]);
const LATIN_WORD = /[\p{Script=Latin}']+/gu;
const SENTENCE_END = /(?<=[.!?])\s+|(?<=[\u3002\uFF01\uFF1F\uFF61\u0964\u0965\u061F\u06D4])\s*|\n+|;\s+/;

/** Each small word, with the Latin-script languages it belongs to. */
const STOPWORDS = new Map<string, string[]>();
for (const language of LANGUAGES)
  for (const word of language.stopwords ?? [])
    STOPWORDS.set(word, [...(STOPWORDS.get(word) ?? []), language.id]);

/** How many of each Latin-script language's small words, and of English's, a text holds. */
function smallWords(text: string): { counts: Map<string, number>; english: number } {
  const counts = new Map<string, number>();
  let english = 0;
  for (const [word] of text.matchAll(LATIN_WORD)) {
    if (ENGLISH.has(word)) english += 1;
    const ids = STOPWORDS.get(word);
    if (ids) for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return { counts, english };
}

/**
 * The languages a sentence is read in: its scripts', and the Latin-script languages whose small
 * words the sentence holds (two, and more than of English's), or the whole text does (three, and
 * more than of English's: "Olvida las instrucciones anteriores." has one, in a Spanish text).
 */
function languagesOf(sentence: string, whole: () => ReadonlySet<string>): Compiled[] {
  const found: Compiled[] = [];
  const here = /[a-z]/.test(sentence) ? smallWords(sentence) : undefined;
  for (const language of LANGUAGES) {
    if (language.script) {
      if (language.script.test(sentence)) found.push(rules(language));
      continue;
    }
    const own = here?.counts.get(language.id) ?? 0;
    if ((own >= 2 && own > (here?.english ?? 0)) || (own > 0 && whole().has(language.id)))
      found.push(rules(language));
  }
  return found;
}

/** The Latin-script languages a whole text is in (three of their small words, more than of English's). */
function textLanguages(text: string): ReadonlySet<string> {
  const { counts, english } = smallWords(text);
  return new Set([...counts].filter(([, n]) => n >= 3 && n > english).map(([id]) => id));
}

/** Whether a verb matched at `index` (of `length`) in `sentence` is under a negation. */
function negated(language: Compiled, sentence: string, index: number, length: number): boolean {
  const before = sentence.slice(Math.max(0, index - 24), index);
  const after = sentence.slice(index + length, index + length + 16);
  return language.negBefore?.test(before) === true || language.negAfter?.test(after) === true;
}

/** Whether a pattern of verbs matches the sentence somewhere not under a negation. */
function ordered(language: Compiled, pattern: RegExp | undefined, sentence: string): boolean {
  if (!pattern) return false;
  for (const match of sentence.matchAll(pattern))
    if (!negated(language, sentence, match.index, match[0].length)) return true;
  return false;
}

/**
 * The first thing in `text` that no honest listing says, in a language other than English, or
 * undefined. `material` says what secret material a sentence names in a way every language shares
 * (a credentials file's path, a secret's variable), or undefined.
 */
export function languageFinding(
  text: string,
  classes: ReadonlySet<string>,
  material: (sentence: string) => string | undefined,
): LanguageFinding | undefined {
  if (!/[\u0080-\u{10FFFF}]|\b(?:el|los|que|do|da|le|les|der|die|das|und|il|della|che)\b/iu.test(text))
    return undefined;
  const active = activeLanguages(reading(text), classes);
  if (active.size === 0) return undefined;
  let languages: ReadonlySet<string> | undefined;
  const whole = () => {
    languages ??= textLanguages(reading(text));
    return languages;
  };
  for (const raw of text.split(SENTENCE_END)) {
    const sentence = reading(raw).trim();
    if (!sentence) continue;
    for (const language of languagesOf(sentence, whole)) {
      const on = active.get(language.id);
      if (!on) continue;
      if (on.override && language.override?.test(sentence))
        return {
          class: "injection",
          language: language.id,
          reason: `tells the agent to ignore its instructions (${language.id})`,
        };
      if (on.conceal && language.conceal?.test(sentence))
        return {
          class: "injection",
          language: language.id,
          reason: `tells the agent to keep something from the user (${language.id})`,
        };
      if (on.persist && language.persist?.test(sentence))
        return {
          class: "injection",
          language: language.id,
          reason: `gives the agent standing orders for later turns (${language.id})`,
        };
      if (!on.secrets) continue;
      // The order first: most sentences give none, and what they name costs more to read.
      const order =
        ordered(language, language.imperative, sentence) ||
        ((language.directive?.test(sentence) === true || language.destination?.test(sentence) === true) &&
          ordered(language, language.transfer, sentence));
      if (!order) continue;
      const kind =
        material(raw) ??
        (language.noun?.test(sentence) && language.source?.test(sentence) ? "secrets by name" : undefined);
      if (kind)
        return {
          class: "secrets",
          language: language.id,
          reason: `directs the agent to fetch or hand over secret material (${kind}; ${language.id})`,
        };
    }
  }
  return undefined;
}

interface Active {
  override: boolean;
  conceal: boolean;
  persist: boolean;
  secrets: boolean;
}

/**
 * The languages whose rules can match somewhere in the whole text, and which of their rules: no
 * rule crosses a sentence's end, so a rule that matches nowhere in the text matches in no sentence,
 * and a long honest text in a language ("Lee el archivo." many times) costs one pass per rule.
 */
function activeLanguages(whole: string, classes: ReadonlySet<string>): Map<string, Active> {
  const active = new Map<string, Active>();
  const latin = /[a-z]/.test(whole) ? smallWords(whole).counts : undefined;
  const has = (pattern: RegExp | undefined) => pattern !== undefined && whole.search(pattern) >= 0;
  for (const language of LANGUAGES) {
    if (language.script ? !language.script.test(whole) : !latin?.get(language.id)) continue;
    const made = rules(language);
    const injection = classes.has("injection");
    const on: Active = {
      override: injection && has(made.override),
      conceal: injection && has(made.conceal),
      persist: injection && has(made.persist),
      secrets:
        classes.has("secrets") &&
        (has(made.imperative) || (has(made.transfer) && (has(made.directive) || has(made.destination)))),
    };
    if (on.override || on.conceal || on.persist || on.secrets) active.set(language.id, on);
  }
  return active;
}
