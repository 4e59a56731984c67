// An example wiggum configuration in the CommonJS format, for teams that
// already keep their tool configs in JavaScript. wiggum reads it statically
// (it never runs it), so it must stay a plain literal.
'use strict';

module.exports = {
  agent: {
    preset: 'claude',
    args: ['--model', 'sonnet'],
    env: ['ANTHROPIC_API_KEY'], // names only: values stay in your environment
  },

  loop: {
    prompt: '.ralph/PROMPT.md',
    maxIterations: 25,
    iterationTimeout: 1200, /* 20 minutes per iteration */
    completionPromise: "<promise>COMPLETE</promise>",
    commit: true,
  },

  sandbox: {
    enabled: true,
    mode: 'auto', // bwrap on Linux, sandbox-exec on macOS
    required: true,
    allowNetwork: true, // the seeds' name for `network`; both are accepted
    allowPaths: [
      './.cache',
      '/tmp/wiggum-example-scratch',
    ],
    readOnlyPaths: ['~/.gitconfig'],
    denyPaths: [
      '~/.ssh',
      '~/.aws',
      '~/.gnupg',
      '~/.config/gcloud',
      '~/.kube',
      '~/.docker',
      '~/.netrc',
    ],
    limits: {
      memory: '6G',
      processes: 1024,
      cpuSeconds: 0,
    },
    container: {
      engine: 'podman',
      image: 'docker.io/library/node:22-bookworm',
      runtime: 'runsc',
    },
  },
};
