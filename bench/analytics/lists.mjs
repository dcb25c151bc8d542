// The small lists the analytics dataset draws its rows from, each entry with a weight (how often
// it is drawn), handed to the engine as query parameters.

/** Every list by name: its columns and cumulative weights. */
export const lists = {
  host: table(
    ['hostname'],
    [
      [['www.acme.example'], 70],
      [['docs.acme.example'], 20],
      [['app.acme.example'], 10],
    ],
  ),
  page: table(
    ['path', 'title'],
    [
      [['/', 'Acme: know who visits'], 30],
      [['/pricing', 'Pricing'], 14],
      [['/features', 'Features'], 10],
      [['/product/integrations', 'Integrations'], 6],
      [['/customers', 'Customers'], 5],
      [['/demo', 'Book a demo'], 5],
      [['/blog/visitor-identification', 'What is visitor identification?'], 6],
      [['/blog/b2b-intent-data', 'B2B intent data, explained'], 4],
      [['/docs/install', 'Install the pixel'], 5],
      [['/docs/api', 'API reference'], 4],
      [['/compare/acme-vs-others', 'Acme compared'], 3],
      [['/security', 'Security'], 2],
      [['/about', 'About us'], 2],
      [['/careers', 'Careers'], 2],
      [['/contact', 'Contact'], 1],
      [['/signup', 'Sign up'], 1],
    ],
  ),
  referrer: table(
    ['url', 'domain', 'engine', 'term'],
    [
      [['', '', '', ''], 40],
      [['https://www.google.com/', 'google.com', 'google', ''], 30],
      [
        [
          'https://www.bing.com/search?q=b2b+visitor+identification',
          'bing.com',
          'bing',
          'b2b visitor identification',
        ],
        5,
      ],
      [['https://duckduckgo.com/', 'duckduckgo.com', 'duckduckgo', ''], 3],
      [['https://www.linkedin.com/', 'linkedin.com', '', ''], 10],
      [['https://news.ycombinator.com/item?id=1', 'news.ycombinator.com', '', ''], 3],
      [['https://t.co/x1y2z3', 't.co', '', ''], 4],
      [['https://www.g2.com/products/acme/reviews', 'g2.com', '', ''], 5],
    ],
  ),
  // The query string of a landing page and what ingest parses out of it.
  campaign: table(
    ['query', 'source', 'medium', 'campaign', 'term', 'content', 'clickKey'],
    [
      [['', '', '', '', '', '', ''], 70],
      [
        [
          '?utm_source=google&utm_medium=cpc&utm_campaign=spring&utm_term=visitor+tracking&gclid=Cj0KCQjw',
          'google',
          'cpc',
          'spring',
          'visitor tracking',
          '',
          'gclid',
        ],
        10,
      ],
      [
        [
          '?utm_source=linkedin&utm_medium=paid_social&utm_campaign=abm-q4&utm_content=carousel&li_fat_id=abc123',
          'linkedin',
          'paid_social',
          'abm-q4',
          '',
          'carousel',
          'li_fat_id',
        ],
        8,
      ],
      [
        [
          '?utm_source=newsletter&utm_medium=email&utm_campaign=may',
          'newsletter',
          'email',
          'may',
          '',
          '',
          '',
        ],
        7,
      ],
      [
        [
          '?utm_source=facebook&utm_medium=social&utm_campaign=retargeting&fbclid=IwAR2abc',
          'facebook',
          'social',
          'retargeting',
          '',
          '',
          'fbclid',
        ],
        5,
      ],
    ],
  ),
  geo: table(
    ['country', 'region', 'city', 'timezone', 'language'],
    [
      [['US', 'California', 'San Francisco', 'America/Los_Angeles', 'en-US'], 18],
      [['US', 'New York', 'New York', 'America/New_York', 'en-US'], 14],
      [['US', 'Texas', 'Austin', 'America/Chicago', 'en-US'], 8],
      [['GB', 'England', 'London', 'Europe/London', 'en-GB'], 10],
      [['DE', 'Berlin', 'Berlin', 'Europe/Berlin', 'de-DE'], 9],
      [['FR', 'Île-de-France', 'Paris', 'Europe/Paris', 'fr-FR'], 7],
      [['NL', 'North Holland', 'Amsterdam', 'Europe/Amsterdam', 'nl-NL'], 5],
      [['CA', 'Ontario', 'Toronto', 'America/Toronto', 'en-CA'], 5],
      [['IN', 'Karnataka', 'Bengaluru', 'Asia/Kolkata', 'en-IN'], 7],
      [['AU', 'New South Wales', 'Sydney', 'Australia/Sydney', 'en-AU'], 4],
      [['BR', 'São Paulo', 'São Paulo', 'America/Sao_Paulo', 'pt-BR'], 4],
      [['ES', 'Madrid', 'Madrid', 'Europe/Madrid', 'es-ES'], 3],
      [['JP', 'Tokyo', 'Tokyo', 'Asia/Tokyo', 'ja-JP'], 2],
    ],
  ),
  device: table(
    ['type', 'browser', 'version', 'os', 'osVersion', 'model', 'width', 'height', 'userAgent'],
    [
      [
        [
          'desktop',
          'Chrome',
          '124.0',
          'Windows',
          '10',
          '',
          '1920',
          '1080',
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
        ],
        30,
      ],
      [
        [
          'desktop',
          'Edge',
          '123.0',
          'Windows',
          '10',
          '',
          '1920',
          '1080',
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 Edg/123.0.2420.81',
        ],
        8,
      ],
      [
        [
          'desktop',
          'Firefox',
          '125.0',
          'Windows',
          '10',
          '',
          '1536',
          '864',
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
        ],
        5,
      ],
      [
        [
          'desktop',
          'Safari',
          '17.4.1',
          'Mac OS',
          '10.15.7',
          '',
          '1440',
          '900',
          'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
        ],
        12,
      ],
      [
        [
          'desktop',
          'Chrome',
          '124.0',
          'Mac OS',
          '10.15.7',
          '',
          '1728',
          '1117',
          'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
        ],
        15,
      ],
      [
        [
          'desktop',
          'Chrome',
          '124.0',
          'Linux',
          '',
          '',
          '2560',
          '1440',
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
        ],
        3,
      ],
      [
        [
          'mobile',
          'Mobile Safari',
          '17.4',
          'iOS',
          '17.4',
          'iPhone',
          '390',
          '844',
          'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
        ],
        14,
      ],
      [
        [
          'tablet',
          'Mobile Safari',
          '17.4',
          'iOS',
          '17.4',
          'iPad',
          '820',
          '1180',
          'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
        ],
        3,
      ],
      [
        [
          'mobile',
          'Chrome Mobile',
          '124.0',
          'Android',
          '14',
          'SM-S918B',
          '412',
          '915',
          'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
        ],
        7,
      ],
      [
        [
          'mobile',
          'Chrome Mobile',
          '124.0',
          'Android',
          '14',
          'Pixel 8',
          '412',
          '915',
          'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
        ],
        3,
      ],
    ],
  ),
  network: table(
    ['isp', 'asn', 'connection', 'hosting'],
    [
      [['Comcast Cable Communications', '7922', 'cable', '0'], 16],
      [['Verizon Business', '701', 'corporate', '0'], 12],
      [['AT&T Services', '7018', 'dsl', '0'], 10],
      [['Deutsche Telekom AG', '3320', 'dsl', '0'], 9],
      [['British Telecommunications', '2856', 'dsl', '0'], 8],
      [['Orange S.A.', '3215', 'dsl', '0'], 6],
      [['Zscaler', '22616', 'corporate', '0'], 10],
      [['Cloudflare WARP', '13335', 'corporate', '0'], 4],
      [['Reliance Jio', '55836', 'cellular', '0'], 6],
      [['T-Mobile USA', '21928', 'cellular', '0'], 8],
      [['Amazon.com', '16509', 'hosting', '1'], 4],
      [['Google Cloud', '396982', 'hosting', '1'], 2],
    ],
  ),
  person: table(
    ['first', 'last', 'title', 'seniority', 'department'],
    [
      [['Jane', 'Doe', 'VP of Sales', 'vp', 'sales'], 1],
      [['John', 'Smith', 'Head of Marketing', 'director', 'marketing'], 1],
      [['Maria', 'Garcia', 'Software Engineer', 'senior', 'engineering'], 1],
      [['Wei', 'Chen', 'Chief Financial Officer', 'c_suite', 'finance'], 1],
      [['Aisha', 'Okafor', 'Product Manager', 'manager', 'product'], 1],
      [['Carlos', 'Silva', 'Account Executive', 'senior', 'sales'], 1],
      [['Olga', 'Müller', 'Marketing Operations Manager', 'manager', 'marketing'], 1],
      [['Hiro', 'Tanaka', 'CTO', 'c_suite', 'engineering'], 1],
      [['Emma', 'Rossi', 'Demand Generation Lead', 'manager', 'marketing'], 1],
      [['Liam', 'Dubois', 'Revenue Operations Analyst', 'entry', 'operations'], 1],
    ],
  ),
  companyName: table(
    ['prefix'],
    [
      [['Acme'], 1],
      [['Globex'], 1],
      [['Initech'], 1],
      [['Umbrella'], 1],
      [['Hooli'], 1],
      [['Stark'], 1],
      [['Wayne'], 1],
      [['Tyrell'], 1],
      [['Soylent'], 1],
      [['Cyberdyne'], 1],
      [['Vandelay'], 1],
      [['Wonka'], 1],
    ],
  ),
  industry: table(
    ['name'],
    [
      [['Software'], 25],
      [['Financial Services'], 12],
      [['Marketing and Advertising'], 10],
      [['Manufacturing'], 10],
      [['Healthcare'], 9],
      [['Retail'], 8],
      [['Education'], 6],
      [['Consulting'], 8],
      [['Logistics'], 5],
      [['Real Estate'], 4],
      [['Telecommunications'], 3],
    ],
  ),
  size: table(
    ['range', 'employees', 'revenue'],
    [
      [['1-10', '6', '$0-1M'], 20],
      [['11-50', '28', '$1M-10M'], 30],
      [['51-200', '120', '$10M-50M'], 25],
      [['201-500', '340', '$50M-100M'], 12],
      [['501-1000', '720', '$100M-500M'], 7],
      [['1001-5000', '2400', '$500M-1B'], 4],
      [['5001+', '12000', '$1B+'], 2],
    ],
  ),
  companyPlace: table(
    ['country', 'region', 'city', 'postal'],
    [
      [['US', 'California', 'San Francisco', '94105'], 25],
      [['US', 'New York', 'New York', '10001'], 20],
      [['GB', 'England', 'London', 'EC1A 1BB'], 12],
      [['DE', 'Berlin', 'Berlin', '10115'], 10],
      [['FR', 'Île-de-France', 'Paris', '75002'], 8],
      [['NL', 'North Holland', 'Amsterdam', '1012'], 6],
      [['IN', 'Karnataka', 'Bengaluru', '560001'], 8],
      [['CA', 'Ontario', 'Toronto', 'M5H'], 6],
      [['AU', 'New South Wales', 'Sydney', '2000'], 5],
    ],
  ),
}

/** A weighted list: its columns as query parameters `<name>_<column>`, its cumulative weights as `<name>_cum`. */
function table(columns, entries) {
  let sum = 0
  return {
    columns: Object.fromEntries(columns.map((column, i) => [column, entries.map(([values]) => values[i])])),
    cumulative: entries.map(([, weight]) => {
      sum += weight
      return sum
    }),
  }
}

/** Every list as query parameters: `<name>_<column>` (Array(String)) and `<name>_cum` (Array(UInt32)). */
export function listParams() {
  const params = {}
  for (const [name, list] of Object.entries(lists)) {
    params[`${name}_cum`] = list.cumulative
    for (const [column, values] of Object.entries(list.columns)) params[`${name}_${column}`] = values
  }
  return params
}
