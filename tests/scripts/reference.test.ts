// docs/reference.md is written from actions.yaml and config.yaml (scripts/reference.ts): the reference an operator
// reads must be what the charm declares to Juju, so a change to either file without `npm run docs:reference` fails.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { currentReference, REFERENCE_PATH, renderReference } from '../../scripts/reference.ts';

describe('scripts: the action and configuration reference', () => {
  it('docs/reference.md is what actions.yaml and config.yaml say today', () => {
    expect(readFileSync(REFERENCE_PATH, 'utf8'), 'run npm run docs:reference').to.equal(currentReference());
  });

  it('names every action, parameter and option, with required parameters and defaults as Juju reads them', () => {
    const actions = `go:
  description: Does it.
  params:
    id: {type: string, description: "Which one; a | in it stays in its cell."}
    dry-run: {type: boolean, default: false, description: Only say.}
    mode: {type: string, enum: [a, b], default: a, description: How.}
  required: [id]
stop:
  description: |
    Stops
    it.
`;
    const config = `options:
  limit: {type: int, default: 7, description: How many.}
  key: {type: secret, description: A secret.}
`;
    const text = renderReference(actions, config);
    expect(text).to.include('### `go`\n\nDoes it.');
    expect(text).to.include('| `id` | string | required | Which one; a \\| in it stays in its cell. |');
    expect(text).to.include('| `dry-run` | boolean | `false` | Only say. |');
    expect(text).to.include('| `mode` | string: `a`, `b` | `"a"` | How. |');
    expect(text).to.include('### `stop`\n\nStops it.\n\nNo parameters.');
    expect(text).to.include('| `limit` | int | `7` | How many. |');
    expect(text).to.include('| `key` | secret | — | A secret. |');
  });

  it('every action of actions.yaml has a section and every option of config.yaml a row', () => {
    const text = readFileSync(REFERENCE_PATH, 'utf8');
    const actions = Object.keys(parse(readFileSync(new URL('../../actions.yaml', import.meta.url), 'utf8')) as object);
    const options = Object.keys((parse(readFileSync(new URL('../../config.yaml', import.meta.url), 'utf8')) as { options: object }).options);
    for (const action of actions) expect(text).to.include(`### \`${action}\``);
    for (const option of options) expect(text).to.match(new RegExp(`^\\| \`${option}\` \\|`, 'm'));
  });
});
