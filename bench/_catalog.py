"""A seeded catalog of realistic tool definitions, and questions about them, for timing search.

Names mix the styles tool packs and MCP servers use (``send_invoice``,
``crm.contacts.find``, ``getWeatherForecast``, ``repo-list-branches``), descriptions are
one to three sentences, and each tool has one to six parameters with descriptions, some
nested (an object, an array of objects). The same seed gives the same catalog.
"""

from __future__ import annotations

import random
from typing import Any


def _words(text: str) -> list[str]:
    return text.split()


DOMAINS = _words(
    """billing crm calendar mail chat docs drive repo issues ci deploy dns storage
queue cache search analytics metrics logs alerts tickets hr payroll inventory orders
shipping catalog pricing weather maps geo travel flights hotels finance stocks crypto
banking tax legal contracts health fitness recipes music video photos news social
sports education courses library translate speech vision ocr pdf spreadsheet database
sql kubernetes docker cloud vm network firewall vpn auth users teams projects tasks
notes wiki forms survey marketing ads email sms voice iot sensors energy"""
)

VERBS = _words(
    """get list find search fetch create update delete remove add set send read write
upload download sync export import convert translate summarize analyze calculate
estimate predict compare merge split archive restore schedule cancel book reserve
approve reject assign close open start stop restart deploy rollback scale monitor
check validate verify parse format render resize compress encrypt decrypt sign share
invite publish subscribe unsubscribe notify track count rank filter sort tag label
move copy rename lock unlock refresh rotate backup query generate transcribe detect
classify extract geocode route measure forecast reconcile refund charge invoice
"""
)

NOUNS = _words(
    """invoice customer contact event meeting message thread channel document file
folder repository branch commit pull_request issue build pipeline release record zone
bucket object queue job cache_entry index dashboard metric log_line alert ticket
employee salary item stock order shipment package product price forecast route place
address flight hotel room booking account balance transaction transfer statement
payment refund subscription plan contract clause patient appointment workout recipe
ingredient song playlist album video clip photo album_cover article headline post
comment reaction score match team player course lesson student book chapter page
phrase sentence transcript image text table row column query schema cluster pod node
container service instance volume snapshot network rule certificate token session
user group role permission project task milestone note form response survey campaign
audience keyword report sensor reading device meter tariff vendor supplier quote
estimate lead opportunity deal pipeline_stage warehouse bin pallet carrier parcel
coupon discount voucher loyalty_point review rating question answer survey_result
prescription diagnosis allergy vaccine lab_result vital claim policy premium
beneficiary loan mortgage portfolio holding dividend option futures_contract bond
exchange_rate currency wallet address_book signature template macro script
function endpoint webhook secret key credential backup restore_point replica shard
partition topic subscription_topic stream event_log trace span incident runbook
oncall_shift postmortem changelog feature_flag experiment variant cohort funnel
segment persona lead_score newsletter podcast episode transcript_line subtitle
recipe_step menu dish restaurant reservation table_booking tour ticket_type seat
venue concert artist gallery exhibit museum park trail summit forecast_zone tide
earthquake storm pollen_count air_quality satellite_image map_tile elevation
timezone holiday shift_plan timesheet expense receipt mileage per_diem budget
grant_application scholarship thesis citation patent trademark lawsuit verdict
court_case statute regulation permit inspection violation fine parking_spot
charging_station vehicle trip fare driver passenger cargo container_ship port"""
)

ADJECTIVES = _words(
    """recent active archived pending draft public private shared primary default
current monthly daily weekly annual upcoming overdue unread starred failed successful
large small new old remote local encrypted external internal"""
)

ENTITIES = (
    "the workspace",
    "the account",
    "the organization",
    "a given project",
    "the current user's profile",
    "a team",
    "the selected region",
    "the tenant",
    "a shared drive",
    "the default calendar",
    "a customer's portfolio",
    "a specific date range",
    "the last 30 days",
    "the production cluster",
    "a city",
    "a country",
    "the billing period",
    "an open sprint",
    "the staging environment",
    "a mailing list",
    "the warehouse",
    "a store location",
    "the public feed",
    "a private channel",
    "the audit trail",
)

SENTENCES = (
    "{Verb} {a} {adj} {noun} in {entity}.",
    "{Verb} the {noun}s that match a filter, newest first.",
    "Returns the {noun} with its {noun2}s and {noun3} details.",
    "Use this to {verb} a {noun} before you {verb2} it.",
    "{Verb} {a} {noun} by its id or name; fails if the {noun} does not exist.",
    "Requires permission to {verb} {noun}s in {entity}.",
    "The result lists each {noun2} with its {adj} {noun3}.",
    "Supports pagination with a cursor and a page size.",
    "Times are in UTC; amounts are in the account's currency.",
    "Only {adj} {noun}s are included unless asked otherwise.",
    "Handy when a user asks about {noun}s or {noun2}s.",
    "Looks up {noun3} information from {entity} and caches it briefly.",
    "Answers questions like 'which {noun} has the most {noun2}s?'.",
    "Rate limited to 60 requests per minute.",
    "Idempotent: calling it twice with the same {noun2} has no further effect.",
    "The {noun} must belong to {entity}.",
    "Sends a notification to the {noun}'s owner when done.",
    "Deprecated in favour of the batch variant for more than 50 {noun}s.",
    "Computes the {noun2} from the {noun3} history.",
    "Works offline from a local {noun} snapshot.",
)

PARAMETER_TEXTS = (
    "The {noun}'s identifier.",
    "The name of the {noun} to {verb}.",
    "How many {noun}s to return, at most 100.",
    "Only {noun}s created after this date (ISO 8601).",
    "The {adj} {noun} to use; defaults to the {noun2} of the caller.",
    "Free text matched against the {noun}'s title and body.",
    "Whether to include {adj} {noun}s.",
    "The unit of the {noun2}, for example metric or imperial.",
    "The ISO code of the {noun}'s country or currency.",
    "The sort order: ascending or descending by {noun2}.",
    "A {noun2} label applied to the {noun}.",
    "Opaque cursor from the previous page.",
    "Email address of the {noun}'s owner.",
    "Latitude and longitude of the {noun2}, comma separated.",
    "Maximum {noun3} in minutes.",
    "{Verb} the {noun} in place instead of making a copy.",
    "Language of the {noun}, as a BCP 47 tag.",
    "Time zone for {noun2} dates.",
    "Template used to render the {noun}.",
    "Percentage between 0 and 100.",
)

QUESTIONS = (
    "Can you {verb} the {adj} {noun} for {entity}?",
    "I need to {verb} a {noun} and see its {noun2}s.",
    "{Verb} all {noun}s from {entity} please",
    "please {verb} my {adj} {noun}s, only the ones with a {noun2}",
    "How do I {verb} {a} {noun} in {entity}?",
    "{verb} {noun} {noun2}",
    "{noun} {noun2}",
    "find a tool to {verb} {noun}s",
)

PARAMETER_TYPES = ("string", "integer", "number", "boolean")


def _an(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _name(rng: random.Random, verb: str, noun: str, domain: str) -> str:
    style = rng.randrange(5)
    words = noun.split("_")
    if style == 0:
        return f"{verb}_{noun}"
    if style == 1:
        return f"{domain}.{noun}s.{verb}"
    if style == 2:
        return verb + "".join(w.capitalize() for w in [domain, *words])
    if style == 3:
        return "-".join([domain, verb, *words])
    return f"{domain}_{verb}_{noun}"


def _fill(template: str, rng: random.Random, verb: str, noun: str) -> str:
    noun2, noun3 = (n.replace("_", " ") for n in rng.sample(NOUNS, 2))
    adj = rng.choice(ADJECTIVES)
    shown = noun.replace("_", " ")
    return template.format(
        Verb=verb.capitalize(),
        verb=verb,
        verb2=rng.choice(VERBS),
        noun=shown,
        noun2=noun2,
        noun3=noun3,
        adj=adj,
        a=_an(adj),
        entity=rng.choice(ENTITIES),
    )


def _parameter(rng: random.Random, verb: str, noun: str, depth: int) -> tuple[str, Any]:
    word = rng.choice(NOUNS)
    camel = word.split("_")[0] + "".join(w.capitalize() for w in word.split("_")[1:])
    name = rng.choice(
        (
            f"{word}_id",
            word,
            f"{camel}Id",
            f"{camel}Name",
            f"max_{word}s",
            f"include_{word}",
            f"{rng.choice(ADJECTIVES)}_{word}",
            f"{word}_{rng.choice(('type', 'status', 'format', 'url', 'count', 'at'))}",
            rng.choice(("limit", "cursor", "page_size", "query", "since", "until", "locale")),
        )
    )
    text = _fill(rng.choice(PARAMETER_TEXTS), rng, verb, word)
    kind = rng.randrange(10)
    if kind == 0 and depth == 0:
        inner = dict(_parameter(rng, verb, noun, 1) for _ in range(rng.randint(1, 3)))
        return name, {"type": "object", "description": text, "properties": inner}
    if kind == 1 and depth == 0:
        inner = dict(_parameter(rng, verb, noun, 1) for _ in range(rng.randint(1, 2)))
        item = {"type": "object", "properties": inner}
        return name, {"type": "array", "description": text, "items": item}
    return name, {"type": rng.choice(PARAMETER_TYPES), "description": text}


def catalog(size: int, seed: int = 7) -> list[tuple[str, str, dict[str, Any]]]:
    """``size`` tools (name, description, input schema), all names distinct."""
    rng = random.Random(seed)
    tools: list[tuple[str, str, dict[str, Any]]] = []
    seen: set[str] = set()
    while len(tools) < size:
        verb, noun, domain = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(DOMAINS)
        name = _name(rng, verb, noun, domain)
        if name in seen:
            name = f"{name}_{len(tools)}"
        seen.add(name)
        sentences = rng.sample(SENTENCES, rng.randint(1, 3))
        description = " ".join(_fill(s, rng, verb, noun) for s in sentences)
        properties = dict(_parameter(rng, verb, noun, 0) for _ in range(rng.randint(1, 6)))
        schema = {
            "type": "object",
            "properties": properties,
            "required": list(properties)[:1],
        }
        tools.append((name, description, schema))
    return tools


def questions(count: int, seed: int = 11) -> list[str]:
    """``count`` questions in the catalog's vocabulary, as a model would ask for a tool."""
    rng = random.Random(seed)
    return [
        _fill(rng.choice(QUESTIONS), rng, rng.choice(VERBS), rng.choice(NOUNS))
        for _ in range(count)
    ]
